"""Problem statements written from observable behaviour, in the style of a GitHub issue.

Inputs are what a user could see: the failing tests' names, the exception/assertion lines of their
tracebacks (pytest's ``E`` lines only, never source lines), and the public contract of the function
involved (its name and the first sentence of its docstring). The text never contains the gold patch
or the mutated line: :func:`scrub` removes any line that repeats a changed line of the patch, and
:func:`leaks` is checked before a task is kept. Templates are picked with a seeded RNG for variety.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

_E_LINE = re.compile(r"^E\s{1,}(.*)$")


@dataclass(frozen=True)
class Evidence:
    """What the statement may use. ``failures`` maps failing test id -> pytest longrepr text."""

    project: str
    module: str  # dotted module of the function, e.g. ``toolz.itertoolz``
    function: str  # qualified name inside the module, e.g. ``Cache.get``
    doc: str  # first sentence of the function's docstring ("" when none)
    failing_tests: tuple[str, ...]
    failures: dict[str, str]
    passing_count: int


def changed_lines(patch: str) -> list[str]:
    """Stripped content of the lines a unified diff adds or removes."""
    out = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith(("+", "-")):
            text = line[1:].strip()
            if text:
                out.append(text)
    return out


def leaks(text: str, patch: str, min_len: int = 8) -> list[str]:
    """Changed lines of ``patch`` (at least ``min_len`` characters) that appear verbatim in ``text``."""
    squashed = re.sub(r"\s+", "", text)
    found = []
    for line in changed_lines(patch):
        key = re.sub(r"\s+", "", line)
        if len(key) >= min_len and key in squashed:
            found.append(line)
    return found


def scrub(lines: Sequence[str], patch: str) -> list[str]:
    """Drop lines that would reveal a changed line of ``patch``."""
    return [ln for ln in lines if not leaks(ln, patch, min_len=6)]


def error_lines(longrepr: str, limit: int = 6) -> list[str]:
    """The ``E`` lines of a pytest traceback (exception and assertion introspection), trimmed."""
    out: list[str] = []
    for raw in longrepr.splitlines():
        m = _E_LINE.match(raw)
        if not m:
            continue
        text = m.group(1).rstrip()
        if not text.strip() or text.strip().startswith(("Use -v", "Full diff", "...Full output")):
            continue
        out.append(text[:240])
        if len(out) >= limit:
            break
    return out


_FRAME = re.compile(r"^(\S+\.py):(\d+): in (\S+)$")


def traceback_lines(longrepr: str, patch: str, max_frames: int = 6) -> list[str]:
    """A pytest ``--tb=short`` traceback rewritten as Python prints one (``Traceback (most recent
    call last):``, ``File "path", line N, in name`` with its source line, then the exception), for
    crash reports. The last ``max_frames`` frames are kept; a source line that repeats a changed
    line of ``patch`` is left out (:func:`scrub`), its frame's location stays."""
    frames: list[list[str]] = []
    for raw in longrepr.splitlines():
        m = _FRAME.match(raw)
        if m:
            frames.append([f'  File "{m.group(1)}", line {m.group(2)}, in {m.group(3)}'])
        elif (frames and raw.startswith("    ") and len(frames[-1]) == 1 and raw.strip()
              and raw.strip().strip("^~") != ""):  # not 3.11+'s column markers
            frames[-1].extend(f"    {ln.strip()}" for ln in scrub([raw.strip()], patch))
    exc = error_lines(longrepr, limit=3)
    if not frames or not exc:
        return []
    out = ["Traceback (most recent call last):"]
    for fr in frames[-max_frames:]:
        out += fr
    return out + [ln.strip() for ln in scrub(exc, patch)]


def function_doc(source: str, qualname: str) -> str:
    """First sentence of the docstring of ``qualname`` (``Class.method``) in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    node: ast.AST = tree
    for part in qualname.split("."):
        found = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child.name == part:
                found = child
                break
        if found is None:
            return ""
        node = found
    doc = ast.get_docstring(node) or "" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
    para = doc.strip().split("\n\n")[0].replace("\n", " ").strip()
    m = re.match(r"(.+?[.!?])(\s|$)", para)
    return (m.group(1) if m else para)[:300]


def _public(qualname: str) -> bool:
    return all(not p.startswith("_") or (p.startswith("__") and p.endswith("__")) for p in qualname.split("."))


def _short(test_id: str) -> str:
    return test_id.split("::", 1)[-1] if "::" in test_id else test_id


_TITLES = (
    "{subject} gives wrong results",
    "Regression: {subject} misbehaves",
    "{subject} does not behave as documented",
    "Unexpected behaviour in {subject}",
    "Bug: {first_test} fails",
    "{subject} broken in current main",
)

_CRASH_TITLES = (
    "{subject} crashes with {exc}",
    "{exc} in {subject}",
    "Regression: {subject} raises {exc}",
    "Bug: {first_test} fails with {exc}",
    "{subject} raises {exc} on ordinary input",
)

_OPENERS = (
    "While using {project} I noticed that {subject} no longer behaves correctly.",
    "Something is off with {subject} in {project}.",
    "After updating my checkout of {project}, the test suite started failing around {subject}.",
    "{subject} in {project} returns results that contradict its documentation.",
    "I think there is a bug in {subject}.",
)

_CRASH_OPENERS = (
    "Calling {subject} in {project} now crashes.",
    "{subject} in {project} raises an exception on input that used to work.",
    "After updating my checkout of {project}, {subject} blows up with a traceback.",
    "I hit a crash in {subject}.",
)

_CLOSERS = (
    "Other tests still pass, so this looks specific to {subject}.",
    "{passing} other tests keep passing; only the ones above fail.",
    "Could someone take a look? The failing tests describe the expected behaviour.",
    "The expected behaviour is the one the failing tests check.",
    "",
)


def _exception_name(ev: Evidence) -> str | None:
    """The exception class the first failing test shows (``NameError``), if any."""
    for t in ev.failing_tests:
        for ln in error_lines(ev.failures.get(t, ""), limit=1):
            m = re.match(r"((?:\w+\.)*\w+(?:Error|Exception|Warning))\b", ln.strip())
            if m:
                return m.group(1).rsplit(".", 1)[-1]
    return None


def write_statement(ev: Evidence, patch: str, seed: int, max_tests: int = 4, traceback: bool = False) -> str:
    """An issue-style problem statement for one task (deterministic for a given ``seed``).

    ``traceback`` (crash tasks): the failure is shown as the Python traceback a user would paste
    (:func:`traceback_lines`) rather than the exception lines alone; two tracebacks at most."""
    rng = random.Random(seed)
    if _public(ev.function):
        subject = f"`{ev.module}.{ev.function}`" if rng.random() < 0.5 else f"`{ev.function}` (in `{ev.module}`)"
    else:
        subject = f"the `{ev.module}` module"
    tests = list(ev.failing_tests)
    first = _short(tests[0]) if tests else "a test"
    title = rng.choice(_TITLES).format(subject=subject, first_test=f"`{first}`")
    exc = _exception_name(ev) if traceback else None
    if exc:  # a crash report is titled by its exception
        title = rng.choice(_CRASH_TITLES).format(subject=subject, first_test=f"`{first}`", exc=f"`{exc}`")
    opener = rng.choice(_OPENERS).format(project=ev.project, subject=subject)
    if exc:
        opener = rng.choice(_CRASH_OPENERS).format(project=ev.project, subject=subject)

    parts = [f"## {title[0].upper()}{title[1:]}", "", opener]
    if ev.doc and _public(ev.function):
        contract = ev.doc.rstrip(".")
        parts += ["", rng.choice((
            f"According to its docstring it should: \"{contract}.\"",
            f"The documented contract is: \"{contract}.\"",
            f"Its docs say: \"{contract}.\" That is not what happens.",
        ))]
    shown = tests[:max_tests]
    parts += ["", rng.choice(("Failing tests:", "These tests fail:", "Steps to reproduce: run the tests below.",
                              "To reproduce, run:"))]
    if parts[-1].startswith(("Steps", "To reproduce")):
        parts += ["", "```", "python -m pytest " + " ".join(shown), "```"]
    else:
        parts += [f"- `{t}`" for t in shown]
    if len(tests) > len(shown):
        parts.append(f"(and {len(tests) - len(shown)} more)")

    observed: list[str] = []
    shown_tb = 0
    for t in tests:
        lines = scrub(error_lines(ev.failures.get(t, "")), patch)
        if traceback and lines:
            if shown_tb >= 2:
                break
            lines = traceback_lines(ev.failures.get(t, ""), patch) or lines
            shown_tb += 1
        if lines:
            observed.append(f"`{_short(t)}`:")
            observed += ["```", *lines, "```"]
        if len(observed) > 12:
            break
    if observed:
        parts += ["", rng.choice(("What I see:", "Actual behaviour:", "Output:", "The failure looks like this:")),
                  *observed]
    closer = rng.choice(_CLOSERS).format(subject=subject, passing=ev.passing_count)
    if closer:
        parts += ["", closer]
    text = "\n".join(parts).strip() + "\n"
    if leaks(text, patch):  # belt and braces: never ship a statement that repeats a changed line
        text = "\n".join(ln for ln in text.splitlines() if not leaks(ln, patch)) + "\n"
    return text
