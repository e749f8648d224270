"""The agent-computer interface: R2E-Gym's four tools, with their exact names and arguments.

- ``file_editor(command, path, file_text?, old_str?, new_str?, insert_line?, view_range?)`` with
  commands view | create | str_replace | insert | undo_edit;
- ``execute_bash(cmd)``;
- ``search(search_term, path=".")``;
- ``finish(command="submit", result?)``.

:class:`ToolRunner` executes calls against one :class:`~swetrain.env.workspace.Workspace`. It never
raises for a bad call: unknown tools, missing or ill-typed arguments, paths outside the workspace
(``..``, absolute paths elsewhere, symlinks pointing out) come back as an observation with
``ok=False``. Paths may be relative to the workspace, absolute under it, or under ``/testbed``
(the sandbox's name for it, which R2E-Gym-trained models use).

``edit_match`` chooses how ``str_replace`` finds ``old_str``: ``exact`` (R2E-Gym: verbatim and
unique, else an error) or ``tolerant``, which behaves exactly the same when ``old_str`` occurs
verbatim, and otherwise tries the layered matching of :mod:`swetrain.env.edit_match` (trailing
whitespace, indentation offset, normalized quotes and spaces, one clearly most similar window),
carrying the old_str -> new_str difference over onto the matched lines; the observation names the
tier that matched, a refusal shows the closest lines with their numbers, and a path that does not
exist gets "did you mean" with the closest existing paths.

One exception: a bubblewrap sandbox killed from outside while it ran a command (bwrap's own process
ended by a signal, e.g. the OOM killer or an operator's kill; the agent's processes live in their
own pid namespace and cannot signal it, and bwrap reports their signals as exit 128+N) raises
:class:`SandboxCrashed`, an environment failure the agent loop turns into ``InfraError``.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any

from swetrain.env import edit_match as em
from swetrain.env.interface import SANDBOX_ROOT
from swetrain.env.stable import stable_output

MAX_OBSERVATION_CHARS = 16000
SNIPPET_LINES = 4
MAX_SEARCH_FILES = 100
MAX_PATH_CANDIDATES = 20000  # files listed at most for a "did you mean" suggestion
EDIT_MATCH_MODES = em.MODES

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "file_editor",
            "description": (
                "View, create and edit files. `view` shows a file with line numbers (or a directory "
                "two levels deep); `create` writes a new file; `str_replace` replaces exactly one "
                "occurrence of old_str with new_str; `insert` inserts new_str after line insert_line "
                "(0 = at the top); `undo_edit` reverts the last edit of path."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                        "description": "The edit command.",
                    },
                    "path": {"type": "string", "description": "File or directory path (absolute or relative to the repository root)."},
                    "file_text": {"type": "string", "description": "Content of the new file (create)."},
                    "old_str": {"type": "string", "description": "Exact text to replace; must occur once (str_replace)."},
                    "new_str": {"type": "string", "description": "Replacement text (str_replace) or text to insert (insert)."},
                    "insert_line": {"type": "integer", "description": "Insert after this line number (insert)."},
                    "view_range": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "description": "[start, end] lines to view, 1-based, end -1 = to the end (view).",
                    },
                },
                "required": ["command", "path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a bash command in the repository root and return its output and exit code.",
            "parameters": {
                "type": "object",
                "properties": {"cmd": {"type": "string", "description": "The bash command to run."}},
                "required": ["cmd"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search for a literal term in the non-hidden files under path (a directory or one file).",
            "parameters": {
                "type": "object",
                "properties": {
                    "search_term": {"type": "string", "description": "Text to search for."},
                    "path": {"type": "string", "description": "Directory or file to search in.", "default": "."},
                },
                "required": ["search_term"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "Submit the current state of the repository as the solution and end the episode.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": ["submit"], "description": "Always 'submit'."},
                    "result": {"type": "string", "description": "Optional summary of the change."},
                },
                "required": [],
            },
        },
    },
]

TOOL_NAMES = tuple(spec["function"]["name"] for spec in TOOL_SPECS)


@dataclass
class ToolResult:
    """The observation of one call. ``ok`` False = the call was invalid or failed; ``done`` = finish."""

    observation: str
    ok: bool = True
    done: bool = False


class ToolError(Exception):
    """A bad call; its message becomes the observation."""


class SandboxCrashed(RuntimeError):
    """The sandbox running a command was killed from outside: an infra failure, not the agent's."""


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _clip(text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters truncated ...]\n{text[-half:]}"


class ToolRunner:
    """Runs tool calls in one workspace; keeps the editor's undo history (cleared on reset)."""

    def __init__(self, workspace, *, command_timeout: float | None = None, edit_match: str = "exact"):
        self.ws = workspace
        self.command_timeout = command_timeout
        self.edit_match = em.check_mode(edit_match)
        self._history: dict[str, list[str | None]] = {}
        self.finished = False
        self.submission: str | None = None
        workspace.add_reset_hook(self.reset_state)

    def reset_state(self) -> None:
        """Forget undo history and the finished flag (the workspace calls this on reset)."""
        self._history.clear()
        self.finished = False
        self.submission = None

    # ----------------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict | None = None) -> ToolResult:
        """Execute one call. Never raises for tool or argument errors."""
        if not isinstance(arguments, dict):
            if arguments is None:
                arguments = {}
            else:
                return ToolResult(f"Error: arguments must be a JSON object, got {type(arguments).__name__}.", ok=False)
        handler = {
            "file_editor": self._file_editor,
            "execute_bash": self._execute_bash,
            "search": self._search,
            "finish": self._finish,
        }.get(name if isinstance(name, str) else "")
        if handler is None:
            return ToolResult(f"Error: unknown tool {name!r}; available tools: {', '.join(TOOL_NAMES)}.", ok=False)
        try:
            return handler(**arguments)
        except ToolError as exc:
            return ToolResult(f"Error: {exc}", ok=False)
        except TypeError as exc:  # unexpected / missing keyword arguments
            msg = str(exc).split(")", 1)[-1].strip() or str(exc)
            return ToolResult(f"Error: invalid arguments for {name}: {msg}", ok=False)
        except (OSError, UnicodeError, ValueError) as exc:
            return ToolResult(f"Error: {name} failed: {exc}", ok=False)

    # ---------------------------------------------------------------------------------- paths
    def resolve(self, path: Any) -> str:
        """Map an agent path to a path relative to the repository root; ToolError if it escapes."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string")
        if "\0" in path:
            raise ToolError("path contains a NUL byte")
        p = path.strip()
        host = getattr(self.ws, "path", None)  # the local backend's host path, also accepted
        prefixes = [SANDBOX_ROOT, self.ws.agent_root]
        if host is not None:
            prefixes += [str(host), os.path.realpath(host)]
        for prefix in dict.fromkeys(prefixes):
            if p == prefix or p.startswith(prefix + "/"):
                p = p[len(prefix) :].lstrip("/") or "."
                break
        else:
            if os.path.isabs(p):
                raise ToolError(f"path {path!r} is outside the repository (root: {self.ws.agent_root})")
        rel = self.ws.resolve_path(p)
        if rel is None:
            raise ToolError(f"path {path!r} resolves outside the repository (root: {self.ws.agent_root})")
        if rel.split("/")[0] == ".git":
            raise ToolError(f"path {path!r} is inside .git; use git commands instead")
        return rel

    def display(self, rel: str) -> str:
        return self.ws.agent_root if rel == "." else f"{self.ws.agent_root}/{rel}"

    # ---------------------------------------------------------------------------- file_editor
    def _file_editor(
        self,
        command: str = "",
        path: str = "",
        file_text: str | None = None,
        old_str: str | None = None,
        new_str: str | None = None,
        insert_line: int | None = None,
        view_range: list[int] | None = None,
    ) -> ToolResult:
        if command not in ("view", "create", "str_replace", "insert", "undo_edit"):
            raise ToolError(f"unknown command {command!r}; use view, create, str_replace, insert or undo_edit")
        full = self.resolve(path)
        shown = self.display(full)
        if command == "view":
            return self._view(full, shown, view_range)
        if command == "create":
            if not isinstance(file_text, str):
                raise ToolError("create needs file_text (a string)")
            if self.ws.path_kind(full) is not None:
                raise ToolError(f"file {shown} already exists; use str_replace to edit it")
            self._remember(full, None)
            self.ws.write_file(full, file_text.encode("utf-8"))
            return ToolResult(f"File created at {shown} ({len(file_text.splitlines())} lines).")
        if command == "undo_edit":
            stack = self._history.get(str(full))
            if not stack:
                raise ToolError(f"no edit of {shown} to undo")
            before = stack.pop()
            if before is None:
                self.ws.remove_file(full)
                return ToolResult(f"Undid the creation of {shown} (file removed).")
            self.ws.write_file(full, before.encode("utf-8"))
            return ToolResult(f"Last edit of {shown} undone.\n{_numbered(before, 1, None)}")
        text = self._read_text(full, shown)
        if command == "str_replace":
            if not isinstance(old_str, str) or old_str == "":
                raise ToolError("str_replace needs a non-empty old_str")
            new = "" if new_str is None else new_str
            if not isinstance(new, str):
                raise ToolError("new_str must be a string")
            count = text.count(old_str)
            if count == 0 and self.edit_match == "tolerant":
                return self._tolerant_replace(full, shown, text, old_str, new)
            if count == 0:
                raise ToolError(f"old_str was not found verbatim in {shown}; nothing replaced")
            if count > 1:
                lines = [i + 1 for i, line in enumerate(text.splitlines()) if old_str.splitlines()[0] in line]
                raise ToolError(f"old_str occurs {count} times in {shown} (lines {lines[:10]}); make it unique")
            self._remember(full, text)
            updated, message = replace_once(text, old_str, new, shown)
            self.ws.write_file(full, updated.encode("utf-8"))
            return ToolResult(message)
        # insert
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise ToolError("insert needs insert_line (an integer)")
        if not isinstance(new_str, str):
            raise ToolError("insert needs new_str (a string)")
        lines = text.split("\n")
        n = len(lines) - (1 if text.endswith("\n") else 0)
        if not 0 <= insert_line <= n:
            raise ToolError(f"insert_line {insert_line} is out of range [0, {n}] for {shown}")
        self._remember(full, text)
        ins = new_str.split("\n")
        if new_str.endswith("\n"):
            ins = ins[:-1]
        updated = "\n".join(lines[:insert_line] + ins + lines[insert_line:])
        self.ws.write_file(full, updated.encode("utf-8"))
        lo = max(1, insert_line - SNIPPET_LINES + 1)
        return ToolResult(
            f"The file {shown} has been edited. Snippet:\n{_numbered(updated, lo, insert_line + len(ins) + SNIPPET_LINES)}"
        )

    def _tolerant_replace(self, full: str, shown: str, text: str, old_str: str, new: str) -> ToolResult:
        """``str_replace`` when old_str is not verbatim in the file (``edit_match: tolerant``)."""
        try:
            match = em.locate(text, old_str, new)
        except em.EditRefused as exc:
            closest = f"\n{exc.closest}" if exc.closest else ""
            raise ToolError(f"old_str was not found verbatim in {shown}; {exc}{closest}") from None
        self._remember(full, text)
        updated = match.apply(text)
        self.ws.write_file(full, updated.encode("utf-8"))
        lo = max(1, match.first_line - SNIPPET_LINES)
        hi = match.first_line + match.replacement.count("\n") + SNIPPET_LINES
        return ToolResult(
            f"old_str was not found verbatim in {shown}; {match.detail} (edit tier: {match.tier}, "
            f"{em.span_text(match.first_line, match.last_line)}). "
            f"The file {shown} has been edited. Snippet:\n{_numbered(updated, lo, hi)}"
        )

    def _suggest_paths(self, rel: str) -> str:
        """A "did you mean" hint naming the existing files nearest to ``rel`` (tolerant mode only)."""
        if self.edit_match != "tolerant":
            return ""
        files: list[str] = []
        stack = ["."]
        while stack and len(files) < MAX_PATH_CANDIDATES:
            folder = stack.pop()
            try:
                entries = self.ws.list_dir(folder)
            except OSError:
                continue
            for entry in entries:
                path = _join(folder, entry.name)
                if entry.is_dir:
                    if not entry.is_link and not em.skip_dir(entry.name):
                        stack.append(path)
                elif not entry.name.startswith("."):
                    files.append(path)
        near = em.close_paths(rel, files)
        return f". Did you mean: {', '.join(self.display(p) for p in near)}?" if near else ""

    def _remember(self, full: str, before: str | None) -> None:
        self._history.setdefault(full, []).append(before)

    def _read_text(self, full: str, shown: str) -> str:
        kind = self.ws.path_kind(full)
        if kind is None:
            raise ToolError(f"file {shown} does not exist{self._suggest_paths(full)}")
        if kind == "dir":
            raise ToolError(f"{shown} is a directory")
        data = self.ws.read_file(full)
        if b"\0" in data[:8192]:
            raise ToolError(f"{shown} is a binary file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{shown} is not UTF-8 text") from None

    def _view(self, full: str, shown: str, view_range: Any) -> ToolResult:
        if self.ws.path_kind(full) == "dir":
            if view_range is not None:
                raise ToolError("view_range is only allowed for files")
            lines = [f"Files and directories up to 2 levels deep in {shown}, excluding hidden items:", shown]
            for entry in self.ws.list_dir(full):
                if entry.name.startswith("."):
                    continue
                rel = _join(full, entry.name)
                lines.append(self.display(rel) + ("/" if entry.is_dir else ""))
                if entry.is_dir and not entry.is_link:
                    for sub in self.ws.list_dir(rel):
                        if not sub.name.startswith("."):
                            lines.append(self.display(_join(rel, sub.name)) + ("/" if sub.is_dir else ""))
            return ToolResult(_clip("\n".join(lines)))
        text = self._read_text(full, shown)
        n = len(text.splitlines())
        lo, hi = 1, None
        if view_range is not None:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
            ):
                raise ToolError("view_range must be a list of two integers [start, end]")
            lo, hi = view_range
            if hi == -1:
                hi = None
            if lo < 1 or lo > max(n, 1) or (hi is not None and (hi < lo or hi > n)):
                raise ToolError(f"view_range {view_range} is invalid for {shown}, which has {n} lines")
        return ToolResult(_clip(f"Here is the result of running `cat -n` on {shown}:\n{_numbered(text, lo, hi)}"))

    # ---------------------------------------------------------------------------- other tools
    def _execute_bash(self, cmd: str = "") -> ToolResult:
        if not isinstance(cmd, str) or not cmd.strip():
            raise ToolError("execute_bash needs cmd (a non-empty string)")
        res = self.ws.run(cmd, timeout=self.command_timeout)
        obs = stable_output(res.output).rstrip("\n")  # a seed reproduces the episode (env/stable.py)
        if self.ws.crashed(res):
            raise SandboxCrashed(f"the sandbox running {cmd[:200]!r} was killed by {_signal_name(-res.returncode)}")
        if res.timed_out:
            return ToolResult(f"{obs}\n[The command timed out and was killed.]", ok=False)
        return ToolResult(f"{obs}\n[exit code: {res.returncode}]".lstrip("\n"))

    def _search(self, search_term: str = "", path: str = ".") -> ToolResult:
        if not isinstance(search_term, str) or not search_term:
            raise ToolError("search needs search_term (a non-empty string)")
        full = self.resolve(path)
        shown = self.display(full)
        kind = self.ws.path_kind(full)
        if kind is None:
            raise ToolError(f"path {shown} does not exist{self._suggest_paths(full)}")
        if kind == "file":
            text = self._read_text(full, shown)
            hits = [f"{i}: {line}" for i, line in enumerate(text.splitlines(), 1) if search_term in line]
            if not hits:
                return ToolResult(f'No matches found for "{search_term}" in {shown}')
            return ToolResult(_clip(f'Matches for "{search_term}" in {shown}:\n' + "\n".join(hits)))
        counts: list[tuple[str, int]] = []
        for rel, data in self.ws.walk(full):
            if b"\0" in data[:8192]:
                continue
            c = data.decode("utf-8", errors="replace").count(search_term)
            if c:
                counts.append((self.display(rel), c))
        if not counts:
            return ToolResult(f'No matches found for "{search_term}" in {shown}')
        total = sum(c for _, c in counts)
        if len(counts) > MAX_SEARCH_FILES:
            return ToolResult(
                f'More than {MAX_SEARCH_FILES} files matched "{search_term}" in {shown} ({total} matches); '
                "please narrow the search."
            )
        lines = [f'Found {total} matches for "{search_term}" in {shown}:']
        lines += [f"{p} ({c} matches)" for p, c in counts]
        return ToolResult("\n".join(lines))

    def _finish(self, command: str = "submit", result: str | None = None) -> ToolResult:
        if command != "submit":
            raise ToolError(f"finish only supports command='submit', got {command!r}")
        self.finished = True
        self.submission = result if isinstance(result, str) else None
        return ToolResult("<<<Finished>>>", ok=True, done=True)


def _join(rel: str, name: str) -> str:
    return name if rel == "." else f"{rel}/{name}"


def replace_once(text: str, old: str, new: str, shown: str) -> tuple[str, str]:
    """``text`` with the first ``old`` replaced by ``new``, and the editor's observation for it
    (the edited lines with ``SNIPPET_LINES`` of context, ``shown`` as the file's name)."""
    start = text[: text.index(old)].count("\n") + 1
    updated = text.replace(old, new, 1)
    lo, hi = max(1, start - SNIPPET_LINES), start + new.count("\n") + SNIPPET_LINES
    return updated, f"The file {shown} has been edited. Snippet:\n{_numbered(updated, lo, hi)}"


def _numbered(text: str, lo: int, hi: int | None) -> str:
    lines = text.splitlines()
    hi = len(lines) if hi is None else min(hi, len(lines))
    return "\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(lo, hi + 1))
