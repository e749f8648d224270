"""Bug injection: procedural libcst transforms that each change one node inside one function.

Every *kind* is a small rule over one libcst node type. A :class:`Site` names one applicable node by
(file, kind, occurrence index in post-order), so enumerating sites and applying one is the same
traversal and fully deterministic. Only code inside function bodies is mutated (the problem
statement needs an enclosing function), never docstrings, and the result must differ and compile.

Standard kinds (13, :data:`KINDS`, the default): comparison_flip, boundary_shift, arith_op,
off_by_one, invert_if, drop_bool_operand, drop_statement, drop_guard, loop_break, swap_args,
constant_change, swap_branches, remove_not.

Crash kinds (4, :data:`CRASH_KINDS`, the "easy" tier, only when asked for): a realistic typo (one
letter dropped, doubled or two neighbours transposed) of a local name (NameError), of a function
or class the module defines or imports, at a call (NameError), of an attribute (AttributeError) or
of a keyword argument (TypeError: unexpected keyword argument). The failure is a traceback into the
library that names the file and line and prints the offending line. The typo is chosen
deterministically from the site and is never an identifier that occurs anywhere in the file, a
builtin or a keyword.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import random
import re
import string
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper, PositionProvider

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
    # crash kinds: the taxonomy's bug-fix.crash_exception ("a supported operation terminates with an
    # unhandled exception"); the kind says which exception.
    "misspell_local": "crash_exception",
    "misspell_call": "crash_exception",
    "wrong_attribute": "crash_exception",
    "wrong_keyword": "crash_exception",
}

CRASH_KINDS: tuple[str, ...] = ("misspell_local", "misspell_call", "wrong_attribute", "wrong_keyword")
ALL_KINDS: tuple[str, ...] = KINDS + CRASH_KINDS
# The exception each crash kind's failing tests must show (checked by the synthesis pipeline).
CRASH_EXCEPTION: dict[str, str] = {"misspell_local": "NameError", "misspell_call": "NameError",
                                   "wrong_attribute": "AttributeError", "wrong_keyword": "TypeError"}
# Difficulty tier of a kind (``labels.tier`` of a task): "easy" for crashes, "standard" otherwise.
KIND_TIER: dict[str, str] = {**{k: "standard" for k in KINDS}, **{k: "easy" for k in CRASH_KINDS}}

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


# ---- crash kinds ---------------------------------------------------------------------------------

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_MIN_TYPO_NAME = 3  # shorter names have no realistic typo (and `i` -> `ii` reads as a rename)


def taken_names(source: str) -> frozenset[str]:
    """Every identifier-like word of ``source`` (code, strings, comments) plus builtins and keywords:
    a typo must be none of these."""
    return frozenset(IDENTIFIER.findall(source)) | _RESERVED


def typo_candidates(name: str, taken: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Realistic one-keystroke typos of ``name``, sorted: one letter dropped or doubled (never the
    first), or two different neighbouring letters transposed. Only letters are touched, so
    underscores and digits stay where they are. Candidates in ``taken`` are left out."""
    if len(name) < _MIN_TYPO_NAME or (name.startswith("__") and name.endswith("__")):
        return []
    out: set[str] = set()
    for i, ch in enumerate(name):
        if not ch.isalpha():
            continue
        if i > 0:  # a dropped or doubled first letter reads as another name, not a slip
            out.add(name[:i] + name[i + 1:])
            out.add(name[:i] + ch + name[i:])
        if i + 1 < len(name) and name[i + 1].isalpha() and name[i + 1] != ch:
            out.add(name[:i] + name[i + 1] + ch + name[i + 2:])
    return sorted(c for c in out if c != name and c.isidentifier() and c not in taken
                  and len(c.strip("_")) >= _MIN_TYPO_NAME)


def typo_sources(typo: str) -> list[str]:
    """The names ``typo`` can be a :func:`typo_candidates` typo of, sorted (the inverse: a letter put
    back, an extra letter removed, a transposition undone), without scanning a vocabulary."""
    letters = string.ascii_letters
    out = {typo[:i] + typo[i + 1:] for i in range(1, len(typo))}
    out |= {typo[:i] + ch + typo[i:] for i in range(1, len(typo) + 1) for ch in letters}
    out |= {typo[:i] + typo[i + 1] + typo[i] + typo[i + 2:] for i in range(len(typo) - 1)}
    return sorted(n for n in out if n != typo and typo in typo_candidates(n))


def make_typo(name: str, taken: frozenset[str] | set[str], salt: str) -> str | None:
    """One typo of ``name`` from :func:`typo_candidates`, picked deterministically by ``salt``."""
    cands = typo_candidates(name, taken)
    if not cands:
        return None
    return cands[int(hashlib.sha1(f"{salt}:{name}".encode()).hexdigest(), 16) % len(cands)]


class _Binds(cst.CSTVisitor):
    """Names a function binds (parameters, assignment / loop / with / except / walrus / comprehension
    targets, local imports and definitions) and the names it declares global or nonlocal."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.declared: set[str] = set()

    def _target(self, t: cst.CSTNode) -> None:
        if isinstance(t, cst.Name):
            self.names.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                self._target(el.value)
        elif isinstance(t, cst.StarredElement):
            self._target(t.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.names.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._target(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self.names.add(cst.Module([]).code_for_node(node.name).split(".")[0])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.names.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.names.add(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(n.name.value for n in node.names)


def _module_names(module: cst.Module) -> set[str]:
    """Functions and classes a module defines at top level, and the names it imports there."""
    out: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            out.add(alias.asname.name.value)
                        elif isinstance(small, cst.ImportFrom) and isinstance(alias.name, cst.Name):
                            out.add(alias.name.value)
    return out


class _CrashMutator(cst.CSTTransformer):
    """The crash kinds: counts applicable nodes (post-order, inside function bodies only, never in
    annotations, decorators or default values) and replaces one name with a typo of it."""

    METADATA_DEPENDENCIES = (PositionProvider, ExpressionContextProvider)

    def __init__(self, kind: str, target: int = -1, salt: str = "", taken: frozenset[str] = frozenset()):
        super().__init__()
        self.kind = kind
        self.target = target
        self.salt = salt
        self.taken = taken
        self.count = 0
        self.sites: list[tuple[int, int, str]] = []
        self.applied = False
        self.typo: str | None = None
        self._scope: list[str] = []
        self._binds: list[_Binds] = []
        self._bodies: set[int] = set()
        self._in_body = 0
        self._annotation = 0
        self._skip: set[int] = set()  # Name nodes that are not references (keywords, attributes)
        self._module: set[str] = set()

    def visit_Module(self, node: cst.Module) -> bool:
        self._module = _module_names(node)
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._scope.append(node.name.value)
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.CSTNode:
        self._scope.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._scope.append(node.name.value)
        binds = _Binds()
        node.visit(binds)
        self._binds.append(binds)
        self._bodies.add(id(node.body))
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.CSTNode:
        self._scope.pop()
        self._binds.pop()
        return updated

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        self._in_body += id(node) in self._bodies
        return True

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.CSTNode:
        self._in_body -= id(original) in self._bodies
        return updated

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        self._in_body += id(node) in self._bodies
        return True

    def leave_SimpleStatementSuite(self, original, updated) -> cst.CSTNode:
        self._in_body -= id(original) in self._bodies
        return updated

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        self._annotation += 1
        return True

    def leave_Annotation(self, original: cst.Annotation, updated: cst.Annotation) -> cst.CSTNode:
        self._annotation -= 1
        return updated

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._skip.add(id(node.attr))
        return True

    def _active(self) -> bool:
        return self._in_body > 0 and self._annotation == 0

    def _hit(self, original: cst.CSTNode, name: str) -> str | None:
        """Count one site for ``name``; the typo when this is the target, else None."""
        if not typo_candidates(name, self.taken):
            return None
        idx = self.count
        self.count += 1
        if self.target < 0:
            line = self.get_metadata(PositionProvider, original).start.line
            self.sites.append((idx, line, ".".join(self._scope)))
            return None
        if idx != self.target:
            return None
        self.typo = make_typo(name, self.taken, f"{self.salt}:{idx}")
        self.applied = True
        return self.typo

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.CSTNode:
        if self.kind != "misspell_local" or not self._active() or id(original) in self._skip:
            return updated
        if self.get_metadata(ExpressionContextProvider, original, None) != ExpressionContext.LOAD:
            return updated
        binds = self._binds[-1]
        if original.value in ("self", "cls") or original.value not in binds.names or original.value in binds.declared:
            return updated
        new = self._hit(original, original.value)
        return updated.with_changes(value=new) if new else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.CSTNode:
        if self.kind != "wrong_attribute" or not self._active():
            return updated
        if self.get_metadata(ExpressionContextProvider, original, None) != ExpressionContext.LOAD:
            return updated
        new = self._hit(original, original.attr.value)
        return updated.with_changes(attr=updated.attr.with_changes(value=new)) if new else updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.CSTNode:
        if not self._active():
            return updated
        if self.kind == "misspell_call":
            func = original.func
            if not isinstance(func, cst.Name) or func.value not in self._module:
                return updated
            if any(func.value in b.names or func.value in b.declared for b in self._binds):
                return updated  # shadowed by a local: not the module's function
            new = self._hit(original, func.value)
            return updated.with_changes(func=updated.func.with_changes(value=new)) if new else updated
        if self.kind == "wrong_keyword":
            args = list(updated.args)
            for i, arg in enumerate(original.args):
                if arg.keyword is None or arg.star:
                    continue
                new = self._hit(arg, arg.keyword.value)
                if new:
                    args[i] = args[i].with_changes(keyword=args[i].keyword.with_changes(value=new))
                    return updated.with_changes(args=args)
        return updated


def _parse(source: str, path: str) -> MetadataWrapper:
    return MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)


def _mutator(kind: str, target: int, source: str, salt: str = "") -> cst.CSTTransformer:
    if kind in CRASH_KINDS:
        return _CrashMutator(kind, target, salt=salt, taken=taken_names(source))
    return _Mutator(kind, target)


def enumerate_sites(source: str, path: str, kinds: Iterable[str] = KINDS) -> list[Site]:
    """All mutable sites of ``kinds`` in one file's ``source`` (``path`` is only recorded)."""
    sites: list[Site] = []
    module = cst.parse_module(source)
    for kind in kinds:
        m = _mutator(kind, -1, source)
        MetadataWrapper(module).visit(m)
        sites.extend(Site(path, kind, idx, line, fn) for idx, line, fn in m.sites)
    return sites


def apply_site(source: str, site: Site) -> str | None:
    """The file's source with ``site`` mutated, or None when the result is unchanged or invalid."""
    m = _mutator(site.kind, site.index, source, salt=site.key)
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
