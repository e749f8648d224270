"""Bug injection: procedural libcst transforms that each change one node inside one function.

Every *kind* is a small rule over one libcst node type. A :class:`Site` names one applicable node by
(file, kind, occurrence index in post-order), so enumerating sites and applying one is the same
traversal and fully deterministic. Only code inside function bodies is mutated (the problem
statement needs an enclosing function), never docstrings, and the result must differ and compile.

Kinds (12): comparison_flip, boundary_shift, arith_op, off_by_one, invert_if, drop_bool_operand,
drop_statement, drop_guard, loop_break, swap_args, constant_change, swap_branches, remove_not.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

KINDS: tuple[str, ...] = (
    "comparison_flip",
    "boundary_shift",
    "arith_op",
    "off_by_one",
    "invert_if",
    "drop_bool_operand",
    "drop_statement",
    "drop_guard",
    "loop_break",
    "swap_args",
    "constant_change",
    "swap_branches",
    "remove_not",
)

# The Task-Type label each kind corresponds to in the taxonomy (bug-fix.<L2>).
KIND_BUG_CLASS: dict[str, str] = {
    "comparison_flip": "logic_error",
    "boundary_shift": "off_by_one",
    "arith_op": "logic_error",
    "off_by_one": "off_by_one",
    "invert_if": "logic_error",
    "drop_bool_operand": "logic_error",
    "drop_statement": "state_corruption",
    "drop_guard": "missing_validation",
    "loop_break": "logic_error",
    "swap_args": "api_misuse",
    "constant_change": "logic_error",
    "swap_branches": "logic_error",
    "remove_not": "logic_error",
}

_FLIP = {
    cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.LessThan: cst.GreaterThanEqual,
    cst.GreaterThan: cst.LessThanEqual, cst.LessThanEqual: cst.GreaterThan,
    cst.GreaterThanEqual: cst.LessThan, cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}
_BOUNDARY = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan,
             cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan}
_ARITH = {cst.Add: cst.Subtract, cst.Subtract: cst.Add, cst.Multiply: cst.Divide, cst.Divide: cst.Multiply,
          cst.FloorDivide: cst.Multiply, cst.Modulo: cst.FloorDivide}
_AUG = {cst.AddAssign: cst.SubtractAssign, cst.SubtractAssign: cst.AddAssign,
        cst.MultiplyAssign: cst.FloorDivideAssign, cst.FloorDivideAssign: cst.MultiplyAssign}


@dataclass(frozen=True)
class Site:
    """One mutable node: ``path`` (posix, relative to the project root), ``kind``, ``index`` (its
    occurrence among this kind's nodes in the file), ``line`` and the enclosing ``function``
    (qualified, e.g. ``Cache.get``)."""

    path: str
    kind: str
    index: int
    line: int
    function: str

    @property
    def key(self) -> str:
        return f"{self.path}:{self.kind}:{self.index}"


@dataclass(frozen=True)
class Mutant:
    site: Site
    original: str
    mutated: str


def _int_value(node: cst.Integer) -> int | None:
    try:
        return int(node.value.replace("_", ""), 0)
    except ValueError:
        return None


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _only_pass(body: Sequence[cst.BaseStatement]) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body) for s in body)


class _Mutator(cst.CSTTransformer):
    """Counts the applicable nodes of one kind (post-order) and rewrites the ``target``-th one."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, kind: str, target: int = -1):
        super().__init__()
        self.kind = kind
        self.target = target
        self.count = 0
        self.sites: list[tuple[int, int, str]] = []  # (index, line, function)
        self.applied = False
        self._scope: list[str] = []
        self._functions = 0
        self._subscript = 0

    # ---- scope tracking -------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._scope.append(node.name.value)
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.CSTNode:
        self._scope.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._scope.append(node.name.value)
        self._functions += 1
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.CSTNode:
        self._scope.pop()
        self._functions -= 1
        return updated

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> bool:
        self._subscript += 1
        return True

    def leave_SubscriptElement(self, original: cst.SubscriptElement, updated: cst.SubscriptElement) -> cst.CSTNode:
        self._subscript -= 1
        return self._maybe("off_by_one", original, updated, self._off_by_one_subscript)

    # ---- the hit counter ------------------------------------------------------------------
    def _maybe(self, kind: str, original: cst.CSTNode, updated: cst.CSTNode, rule) -> cst.CSTNode:
        if kind != self.kind or self._functions == 0:
            return updated
        new = rule(updated)
        if new is None:
            return updated
        idx = self.count
        self.count += 1
        if self.target < 0:
            line = self.get_metadata(PositionProvider, original).start.line
            self.sites.append((idx, line, ".".join(self._scope)))
            return updated
        if idx == self.target:
            self.applied = True
            return new
        return updated

    # ---- rules: each returns the mutated node or None when not applicable -------------------
    @staticmethod
    def _swap_op(node: cst.Comparison, table: dict) -> cst.CSTNode | None:
        if len(node.comparisons) != 1:
            return None
        target = node.comparisons[0]
        new_cls = table.get(type(target.operator))
        if new_cls is None:
            return None
        op = target.operator
        kwargs = {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}
        if new_cls in (cst.IsNot, cst.NotIn):
            kwargs["whitespace_between"] = cst.SimpleWhitespace(" ")
        return node.with_changes(comparisons=[target.with_changes(operator=new_cls(**kwargs))])

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.CSTNode:
        if self.kind == "comparison_flip":
            return self._maybe("comparison_flip", original, updated, lambda n: self._swap_op(n, _FLIP))
        return self._maybe("boundary_shift", original, updated, lambda n: self._swap_op(n, _BOUNDARY))

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.CSTNode:
        def rule(n: cst.BinaryOperation):
            new_cls = _ARITH.get(type(n.operator))
            if new_cls is None or isinstance(n.left, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                return None  # string concatenation / %-formatting: a crash, not a logic bug
            op = n.operator
            return n.with_changes(operator=new_cls(whitespace_before=op.whitespace_before,
                                                   whitespace_after=op.whitespace_after))
        return self._maybe("arith_op", original, updated, rule)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign) -> cst.CSTNode:
        def rule(n: cst.AugAssign):
            new_cls = _AUG.get(type(n.operator))
            if new_cls is None:
                return None
            op = n.operator
            return n.with_changes(operator=new_cls(whitespace_before=op.whitespace_before,
                                                   whitespace_after=op.whitespace_after))
        return self._maybe("arith_op", original, updated, rule)

    @staticmethod
    def _off_by_one_subscript(n: cst.SubscriptElement):
        sl = n.slice
        if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Integer):
            v = _int_value(sl.value)
            if v is None:
                return None
            return n.with_changes(slice=sl.with_changes(value=cst.Integer(str(v + 1 if v >= 0 else v - 1))))
        if isinstance(sl, cst.Index) and isinstance(sl.value, cst.UnaryOperation) and isinstance(sl.value.operator, cst.Minus) \
                and isinstance(sl.value.expression, cst.Integer):  # x[-1] -> x[-2]
            v = _int_value(sl.value.expression)
            if v is None:
                return None
            return n.with_changes(slice=sl.with_changes(value=sl.value.with_changes(expression=cst.Integer(str(v + 1)))))
        if isinstance(sl, cst.Slice):
            for part in ("upper", "lower"):
                val = getattr(sl, part)
                if isinstance(val, cst.Integer):
                    v = _int_value(val)
                    if v is None:
                        continue
                    return n.with_changes(slice=sl.with_changes(**{part: cst.Integer(str(v + 1))}))
                if val is not None and not isinstance(val, (cst.UnaryOperation,)):
                    return n.with_changes(slice=sl.with_changes(**{part: cst.BinaryOperation(
                        left=val, operator=cst.Add(), right=cst.Integer("1"))}))
        return None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.CSTNode:
        if self.kind == "off_by_one":
            def rng(n: cst.Call):
                if not (isinstance(n.func, cst.Name) and n.func.value == "range") or not n.args or len(n.args) > 2:
                    return None
                if any(a.star or a.keyword for a in n.args):
                    return None
                last = n.args[-1]
                new_val = cst.BinaryOperation(left=last.value, operator=cst.Subtract(), right=cst.Integer("1"))
                if isinstance(last.value, cst.Integer) and _int_value(last.value) is not None:
                    new_val = cst.Integer(str(_int_value(last.value) - 1))
                return n.with_changes(args=[*n.args[:-1], last.with_changes(value=new_val)])
            return self._maybe("off_by_one", original, updated, rng)

        def swap(n: cst.Call):
            pos = [a for a in n.args if not a.star and a.keyword is None]
            if len(pos) < 2 or n.args[0] is not pos[0] or n.args[1] is not pos[1]:
                return None
            a, b = n.args[0], n.args[1]
            code = cst.Module([]).code_for_node
            if code(a.value) == code(b.value):
                return None
            return n.with_changes(args=[a.with_changes(value=b.value), b.with_changes(value=a.value), *n.args[2:]])
        return self._maybe("swap_args", original, updated, swap)

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.CSTNode:
        if self.kind == "invert_if":
            def inv(n: cst.If):
                test = n.test
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    return n.with_changes(test=test.expression)
                if not isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not test.lpar:
                    test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                return n.with_changes(test=cst.UnaryOperation(operator=cst.Not(), expression=test))
            return self._maybe("invert_if", original, updated, inv)
        if self.kind == "swap_branches":
            def sw(n: cst.If):
                if not isinstance(n.orelse, cst.Else):
                    return None
                return n.with_changes(body=n.body.with_changes(body=n.orelse.body.body),
                                      orelse=n.orelse.with_changes(body=n.orelse.body.with_changes(body=n.body.body)))
            return self._maybe("swap_branches", original, updated, sw)
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.CSTNode:
        return self._maybe("swap_branches", original, updated,
                           lambda n: n.with_changes(body=n.orelse, orelse=n.body))

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation) -> cst.CSTNode:
        def drop(n: cst.BooleanOperation):
            # alternate which operand survives so both halves of conditions get tested
            keep = n.left if (self.count % 2 == 0) else n.right
            return keep.with_changes(lpar=n.lpar, rpar=n.rpar) if n.lpar and hasattr(keep, "lpar") else keep
        return self._maybe("drop_bool_operand", original, updated, drop)

    def leave_UnaryOperation(self, original: cst.UnaryOperation, updated: cst.UnaryOperation) -> cst.CSTNode:
        def rm(n: cst.UnaryOperation):
            if not isinstance(n.operator, cst.Not):
                return None
            return n.expression
        return self._maybe("remove_not", original, updated, rm)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.CSTNode:
        def flip(n: cst.Name):
            if n.value == "True":
                return n.with_changes(value="False")
            if n.value == "False":
                return n.with_changes(value="True")
            return None
        return self._maybe("constant_change", original, updated, flip)

    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.CSTNode:
        if self._subscript:
            return updated  # subscripts are off_by_one's
        def bump(n: cst.Integer):
            v = _int_value(n)
            if v is None:
                return None
            return cst.Integer(str(v + 1 if v in (0, 1) else v - 1))
        return self._maybe("constant_change", original, updated, bump)

    def _block_rule(self, body: Sequence[cst.BaseStatement], pick) -> list[cst.BaseStatement] | None:
        """Remove the statement ``pick`` selects from a block (``pass`` if the block would empty)."""
        for i, stmt in enumerate(body):
            if pick(stmt, i):
                rest = [*body[:i], *body[i + 1:]]
                if not rest or all(_is_docstring(s) for s in rest):
                    rest = [*rest, cst.SimpleStatementLine([cst.Pass()])]
                return rest
        return None

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.CSTNode:
        # drop_statement / drop_guard act on one statement of a block; each statement is one site.
        if self.kind not in ("drop_statement", "drop_guard") or self._functions == 0:
            return updated
        for i, stmt in enumerate(updated.body):
            ok = self._drop_ok(stmt, i)
            if not ok:
                continue
            rest = [*updated.body[:i], *updated.body[i + 1:]]
            if not rest or all(_is_docstring(s) for s in rest):
                rest = [*rest, cst.SimpleStatementLine([cst.Pass()])]
            new = updated.with_changes(body=rest)
            idx = self.count
            self.count += 1
            if self.target < 0:
                line = self.get_metadata(PositionProvider, original.body[i]).start.line
                self.sites.append((idx, line, ".".join(self._scope)))
            elif idx == self.target:
                self.applied = True
                return new
        return updated

    def _drop_ok(self, stmt: cst.BaseStatement, i: int) -> bool:
        if self.kind == "drop_statement":
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or _is_docstring(stmt):
                return False
            small = stmt.body[0]
            if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                return not (isinstance(small, cst.AnnAssign) and small.value is None)
            return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
        # drop_guard: `if cond: raise/return/continue` without else
        if not isinstance(stmt, cst.If) or stmt.orelse is not None or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        last = stmt.body.body[-1]
        return (len(stmt.body.body) <= 2 and isinstance(last, cst.SimpleStatementLine)
                and isinstance(last.body[-1], (cst.Raise, cst.Return, cst.Continue, cst.Break)))

    def _loop(self, original, updated):
        def once(n):
            if not isinstance(n.body, cst.IndentedBlock) or _only_pass(n.body.body):
                return None
            return n.with_changes(body=n.body.with_changes(body=[*n.body.body, cst.SimpleStatementLine([cst.Break()])]))
        return self._maybe("loop_break", original, updated, once)

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.CSTNode:
        return self._loop(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.CSTNode:
        return self._loop(original, updated)


def _parse(source: str, path: str) -> MetadataWrapper:
    return MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)


def enumerate_sites(source: str, path: str, kinds: Iterable[str] = KINDS) -> list[Site]:
    """All mutable sites of ``kinds`` in one file's ``source`` (``path`` is only recorded)."""
    sites: list[Site] = []
    module = cst.parse_module(source)
    for kind in kinds:
        m = _Mutator(kind)
        MetadataWrapper(module).visit(m)
        sites.extend(Site(path, kind, idx, line, fn) for idx, line, fn in m.sites)
    return sites


def apply_site(source: str, site: Site) -> str | None:
    """The file's source with ``site`` mutated, or None when the result is unchanged or invalid."""
    m = _Mutator(site.kind, site.index)
    new = MetadataWrapper(cst.parse_module(source)).visit(m).code
    if not m.applied or new == source:
        return None
    try:
        compile(new, site.path, "exec")
    except (SyntaxError, ValueError):
        return None
    return new


def order_sites(sites: Sequence[Site], seed: int, per_function: int = 2) -> list[Site]:
    """A deterministic, diverse order: kinds interleaved round-robin (in a seeded order), sites
    shuffled within a kind, and at most ``per_function`` sites of one function before others."""
    rng = random.Random(seed)
    by_kind: dict[str, list[Site]] = defaultdict(list)
    for s in sorted(sites, key=lambda s: (s.path, s.kind, s.index)):
        by_kind[s.kind].append(s)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    for k in kinds:
        rng.shuffle(by_kind[k])
    first: list[Site] = []
    later: list[Site] = []
    used: dict[tuple[str, str], int] = defaultdict(int)
    queues = [list(by_kind[k]) for k in kinds]
    while any(queues):
        for q in queues:
            if q:
                s = q.pop(0)
                fn = (s.path, s.function)
                if used[fn] < per_function:
                    used[fn] += 1
                    first.append(s)
                else:
                    later.append(s)
    return first + later


def is_test_path(rel: str) -> bool:
    """True for files a test suite owns (test dirs, test modules, conftest)."""
    parts = Path(rel).parts
    name = parts[-1]
    return (any(p in ("tests", "test", "testing", "t") for p in parts[:-1]) or name.startswith("test_")
            or name.endswith("_test.py") or name == "conftest.py" or name == "tests.py")


_SKIP_DIRS = {"docs", "doc", "examples", "example", "benchmarks", "bench", "build", "dist", "scripts", "tools",
              ".tox", ".nox", ".git", "__pycache__", "site-packages", ".venv", "venv"}


def source_files(root: str | Path, include: Sequence[str] = ()) -> list[str]:
    """Mutable (non-test) Python files under ``root``, sorted, relative posix paths.

    ``include`` restricts to these folders/files (relative); otherwise every package or module
    outside tests, docs, examples and build files is eligible.
    """
    root = Path(root)
    out: list[str] = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        parts = Path(rel).parts
        if include and not any(rel == i or rel.startswith(i.rstrip("/") + "/") for i in include):
            continue
        if any(x in _SKIP_DIRS or x.endswith(".egg-info") for x in parts[:-1]):
            continue
        if is_test_path(rel) or parts[-1] in ("setup.py", "noxfile.py", "tasks.py", "_version.py", "version.py",
                                              "__main__.py", "conftest.py", "fabfile.py"):
            continue
        out.append(rel)
    return out
