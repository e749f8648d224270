"""Import rules (docs/architecture.md, "Import rules"), checked on the source with ``ast`` only:

* the module import graph of ``swetrain`` has no cycle. Every ``import`` / ``from ... import`` counts,
  also those inside functions or ``if TYPE_CHECKING:`` (relative imports resolved); ``from pkg import
  name`` is an edge to the module ``pkg.name`` when that is a module, otherwise an edge to ``pkg``;
* no module imports another module's private name (``from X import _name``; dunder names such as
  ``__version__`` are fine). A helper that other modules need is public in its home module.

Nothing of ``swetrain`` is imported here: the check is pure parsing and takes well under a second.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import modules, resolve_module  # one walk of the source tree for both tests

SRC = Path(__file__).resolve().parents[1] / "src" / "swetrain"

#: cycles known and accepted for now, each a frozenset of module names (a strongly connected
#: component). Empty: the graph is acyclic. Adding a component here needs a reason in a comment.
ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()


def imports_of(module: str, path: Path, is_pkg: bool, mods: dict):
    """(imported module, line) edges and (source module, private name, line) private imports of one file."""
    package = module if is_pkg else module.rpartition(".")[0]
    edges: list[tuple[str, int]] = []
    private: list[tuple[str, str, int]] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def add(target: str, line: int) -> None:
        if target == "swetrain" or target.startswith("swetrain."):
            resolved = resolve_module(target, mods)
            if resolved and resolved != module:
                edges.append((resolved, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "swetrain" or target.startswith("swetrain.")):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in mods:  # ``from pkg import mod`` imports the module pkg.mod
                    add(full, node.lineno)
                    continue
                add(target, node.lineno)
                name = alias.name
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    source = resolve_module(target, mods)
                    if source != module:
                        private.append((target, name, node.lineno))
    return edges, private


def import_graph(mods: dict | None = None):
    """module -> {imported module: first line}, and every private-name import as 'file:line: ...'."""
    mods = modules(SRC) if mods is None else mods
    graph: dict[str, dict[str, int]] = {}
    private: list[str] = []
    for module, (path, is_pkg) in mods.items():
        edges, priv = imports_of(module, path, is_pkg, mods)
        graph[module] = {}
        for target, line in edges:
            graph[module].setdefault(target, line)
        private += [f"{path.relative_to(SRC.parent)}:{line}: {module} imports {name} from {src}"
                    for src, name, line in priv]
    return graph, private


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted; only those of size > 1."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return sorted(out)


def _describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [f"    {a} -> {b} (line {graph[a][b]})" for a in component for b in sorted(graph[a]) if b in members]
    return "cycle: " + " <-> ".join(component) + "\n" + "\n".join(edges)


def test_strongly_connected_finds_cycles():
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}, "e": {}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b": 1}, "b": {}}) == []


def test_import_graph_is_acyclic():
    graph, _ = import_graph()
    assert "swetrain.env.backend" in graph  # the parse saw the package
    cycles = [c for c in strongly_connected(graph) if frozenset(c) not in ALLOWED_CYCLES]
    assert not cycles, "import cycles (break them; see docs/architecture.md, 'Import rules'):\n" + \
        "\n".join(_describe(c, graph) for c in cycles)


def test_allowed_cycles_still_exist():
    """An allow-list entry whose cycle is gone must be removed, so the list only shrinks."""
    graph, _ = import_graph()
    present = {frozenset(c) for c in strongly_connected(graph)}
    stale = [sorted(c) for c in ALLOWED_CYCLES if c not in present]
    assert not stale, f"allowed cycles that no longer exist, remove them: {stale}"


def test_no_private_names_imported_from_other_modules():
    _, private = import_graph()
    assert not private, "imports of other modules' private names (make them public at home):\n" + \
        "\n".join(private)
