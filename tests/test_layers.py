"""Import layering, checked on the real import graph (ast over every source file of the package):

* ``swetrain.train`` and ``swetrain.eval`` never import each other, at import time or inside a
  function (the pure ``swetrain.eval.metrics`` is importable from any layer: docs/architecture.md);
* no core module (every package of ``swetrain`` except ``recipes``, and the top-level modules other
  than the ``swetrain`` command ``swetrain.cli``, which registers the recipes' sub-commands) loads
  ``swetrain.recipes`` when it is imported, directly or through other modules. Core reaches a recipe
  only on use (e.g. the import strings of ``swetrain.policy.spec.NAMED``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import swetrain

PACKAGE = Path(swetrain.__file__).resolve().parent
#: importable from any layer: pure functions, no I/O (docs/architecture.md, "Pure metrics ...")
PURE_SHARED = frozenset({"swetrain.eval.metrics"})
#: the ``swetrain`` command: it imports every layer's sub-commands, recipes included, so core may not import it
ASSEMBLERS = frozenset({"swetrain.cli"})


def modules(root: Path = PACKAGE, name: str = "swetrain") -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (source file, is a package)."""
    mods = {}
    for path in sorted(root.rglob("*.py")):
        parts = [name, *path.relative_to(root).with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return mods


def resolve_module(name: str, mods: dict) -> str | None:
    """The module an import of ``name`` executes last (``a.b.attr`` -> ``a.b``)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def import_edges(module: str, source: str, is_pkg: bool, mods: dict) -> list[tuple[str, bool, int]]:
    """(imported module, at import time?, line) for every ``import``/``from ... import`` of a
    ``swetrain`` module in ``source`` (relative imports resolved; ``importlib.import_module`` with a
    constant name counted; imports inside functions or ``if TYPE_CHECKING:`` are not at import time)."""
    package = module if is_pkg else module.rpartition(".")[0]
    edges: list[tuple[str, bool, int]] = []

    def add(target: str, eager: bool, line: int) -> None:
        if target == "swetrain" or target.startswith("swetrain."):
            resolved = resolve_module(target, mods)
            if resolved and resolved != module:
                edges.append((resolved, eager, line))

    def visit(node: ast.AST, eager: bool) -> None:
        for child in ast.iter_child_nodes(node):
            child_eager = eager and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) \
                and not _is_type_checking(child)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, eager, child.lineno)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:  # ``from pkg import mod`` imports pkg.mod
                    full = f"{target}.{alias.name}"
                    add(full if full in mods else target, eager, child.lineno)
            elif isinstance(child, ast.Call) and child.args and isinstance(child.args[0], ast.Constant) \
                    and isinstance(child.args[0].value, str):
                func = child.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname in ("import_module", "__import__"):
                    add(child.args[0].value, eager, child.lineno)
            visit(child, child_eager)

    visit(ast.parse(source), True)
    return edges


def _graph():
    mods = modules()
    edges = {m: import_edges(m, path.read_text(encoding="utf-8"), is_pkg, mods) for m, (path, is_pkg) in mods.items()}
    return mods, edges


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _loaded_at_import(module: str, mods: dict, edges: dict) -> dict[str, str]:
    """Every module that importing ``module`` executes -> the module that pulled it in (import-time
    edges only; importing ``a.b.c`` also runs the packages ``a`` and ``a.b``)."""
    seen = {module: ""}
    todo = [module]
    while todo:
        cur = todo.pop()
        nxt = [t for t, eager, _ in edges[cur] if eager]
        parent = cur.rpartition(".")[0]
        nxt += [parent] if parent in mods else []
        for t in nxt:
            if t not in seen:
                seen[t] = cur
                todo.append(t)
    return seen


def _chain(seen: dict[str, str], end: str) -> str:
    path = [end]
    while seen[path[-1]]:
        path.append(seen[path[-1]])
    return " -> ".join(reversed(path))


def test_the_walk_sees_the_package():
    mods, edges = _graph()
    for name in ("swetrain.train.rl", "swetrain.eval.protocol", "swetrain.policy.spec", "swetrain.recipes.tiny.warmstart"):
        assert name in mods
    assert any(t == "swetrain.train.metrics" and eager for t, eager, _ in edges["swetrain.train.rl"])


def test_import_edges_resolve_relative_lazy_and_type_checking_imports():
    mods = {m: (Path(), False) for m in ("swetrain.a.x", "swetrain.a.y", "swetrain.b.z", "swetrain.r.q")}
    mods.update({m: (Path(), True) for m in ("swetrain", "swetrain.a", "swetrain.b", "swetrain.r")})
    src = (
        "from typing import TYPE_CHECKING\n"
        "from . import y\n"
        "from ..b.z import thing\n"
        "import swetrain.b\n"
        "if TYPE_CHECKING:\n    from swetrain.r import q\n"
        "def f():\n    from swetrain.r.q import g\n    importlib.import_module('swetrain.r.q')\n"
    )
    got = sorted(import_edges("swetrain.a.x", src, False, mods))
    assert got == [("swetrain.a.y", True, 2), ("swetrain.b", True, 4), ("swetrain.b.z", True, 3),
                   ("swetrain.r.q", False, 6), ("swetrain.r.q", False, 8), ("swetrain.r.q", False, 9)]


def test_train_and_eval_do_not_import_each_other():
    mods, edges = _graph()
    allowed = PURE_SHARED | {p.rpartition(".")[0] for p in PURE_SHARED}  # with its package's __init__
    bad = set()
    for module, out in edges.items():
        for target, _, line in out:
            if {_layer(module), _layer(target)} == {"train", "eval"} and target not in allowed:
                bad.add(f"{mods[module][0].relative_to(PACKAGE.parent)}:{line}: {module} imports {target}")
    assert not bad, "train and eval must not import each other (a recipe may use both):\n" + "\n".join(sorted(bad))


def test_pure_shared_modules_import_no_layer():
    """What every layer may import must not pull a layer in with it."""
    mods, edges = _graph()
    for pure in PURE_SHARED:
        loaded = _loaded_at_import(pure, mods, edges)
        lazy = [t for t, _, _ in edges[pure]]
        extra = sorted(set(loaded) - PURE_SHARED - {"swetrain", pure.rpartition(".")[0]}) + sorted(set(lazy) - set(loaded))
        assert not extra, f"{pure} is importable from any layer, so it may not import {extra}"


def test_core_does_not_load_recipes_at_import_time():
    mods, edges = _graph()
    core = [m for m in mods if _layer(m) != "recipes" and m not in ASSEMBLERS]
    assert "swetrain.train.rl" in core and "swetrain.policy.spec" in core
    bad: dict[str, str] = {}  # the module that imports a recipe -> one chain from a core module
    for module in core:
        seen = _loaded_at_import(module, mods, edges)
        # the ``swetrain`` command loads the recipes' sub-commands (by name, in a loop the walk cannot read)
        loads_recipes = [m for m in seen if (_layer(m) == "recipes" or m in ASSEMBLERS) and m != module]
        for hit in sorted(m for m in loads_recipes if _layer(seen[m]) != "recipes" and seen[m] not in ASSEMBLERS):
            bad.setdefault(seen[hit], _chain(seen, hit))
    assert not bad, "core modules load swetrain.recipes when imported:\n" + "\n".join(bad[k] for k in sorted(bad))
