"""Input adapters: normalise issue–change tasks and agent trajectories into one :class:`Evidence`.

Issue–change evidence: repository name and metadata (description, topics, primary language), the
problem statement, bounded excerpts of the code patch and test patch. Trajectory evidence: the user
request, the agent's actions, tool observations, edits and the verification outcome. Both expose the
changed files and diff statistics derived from the patch, so the same labeler applies to both.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from swetrain.label.cards import RepoCard

STATEMENT_CHARS = 6000
PATCH_EXCERPT_CHARS = 3000
TEST_EXCERPT_CHARS = 1500
TRAJ_EXCERPT_CHARS = 2500

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
_PLUS_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)
_TEST_PATH = re.compile(r"(^|/)(tests?|testing|spec|__tests__)(/|$)|(^|/)test_[^/]*$|_test\.\w+$|\.test\.\w+$|\.spec\.\w+$|(^|/)conftest\.py$")


class EvidenceError(ValueError):
    """An input row or trajectory lacks what the labeler needs. Names the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"field {field!r}: {message}")


@dataclass(frozen=True)
class PatchStats:
    """Structure of a unified diff: changed files (test files separated) and line counts."""

    files: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0
    hunks: int = 0

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed

    @property
    def empty(self) -> bool:
        return not self.files and not self.test_files


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def patch_stats(patch: str) -> PatchStats:
    """Parse a unified diff (``git diff`` or plain ``---/+++``) into :class:`PatchStats`."""
    if not patch or not patch.strip():
        return PatchStats()
    paths = [b for _, b in _DIFF_FILE.findall(patch)] or [p for p in _PLUS_FILE.findall(patch) if p != "/dev/null"]
    paths = list(dict.fromkeys(paths))
    added = removed = hunks = 0
    for line in patch.splitlines():
        if line.startswith("@@"):
            hunks += 1
        elif line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    code = tuple(p for p in paths if not is_test_path(p))
    tests = tuple(p for p in paths if is_test_path(p))
    return PatchStats(files=code, test_files=tests, added=added, removed=removed, hunks=hunks)


def _excerpt(text: str, limit: int) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[{len(text) - limit} more characters]"


def _changed_lines_excerpt(patch: str, limit: int) -> str:
    """The +/- lines of a diff (headers and context dropped; paths live in PatchStats), bounded."""
    keep = [ln for ln in (patch or "").splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))]
    return _excerpt("\n".join(keep), limit)


@dataclass(frozen=True)
class Evidence:
    """The common instance representation both adapters produce."""

    kind: str  # "issue_change" | "trajectory"
    instance_id: str
    repo: str
    statement: str
    description: str = ""
    topics: tuple[str, ...] = ()
    language: str = ""
    patch_excerpt: str = ""
    test_excerpt: str = ""
    actions: str = ""
    observations: str = ""
    verification: str = ""
    stats: PatchStats = field(default_factory=PatchStats)
    card: RepoCard | None = None  # the repository card (README opening, manifests, layout), when one was found

    @property
    def has_metadata(self) -> bool:
        return bool(self.description.strip() or self.topics or (self.card is not None and not self.card.empty))

    @property
    def card_text(self) -> str:
        """The repository card as one paragraph (empty without a card)."""
        return self.card.text() if self.card is not None else ""

    @property
    def metadata_text(self) -> str:
        """Given description and topics, then the card: what the repository says it is."""
        return " ".join(p for p in (self.description, " ".join(self.topics), self.card_text) if p.strip())

    @property
    def repo_words(self) -> str:
        """Repository owner/name split into words ("scikit-learn/scikit-learn" -> "scikit learn")."""
        name = self.repo.split("/")[-1] if self.repo else ""
        return " ".join(w for w in re.split(r"[-_./\s]+", name) if w)

    def change_text(self) -> str:
        """Changed file paths plus the bounded patch/test excerpts and trajectory edits."""
        parts = [" ".join(self.stats.files + self.stats.test_files), self.patch_excerpt, self.test_excerpt, self.actions]
        return "\n".join(p for p in parts if p)

    def render(self) -> str:
        """A readable rendering for prompts (LLM backend) and rationales."""
        lines = [f"Evidence form: {self.kind}", f"Repository: {self.repo}"]
        if self.description.strip():
            lines.append(f"Description: {self.description}")
        if self.topics:
            lines.append(f"Topics: {', '.join(self.topics)}")
        if self.card is not None and not self.card.empty:
            lines.append(f"Repository card (from the repository itself): {self.card_text}")
        if not self.has_metadata:
            lines.append("Repository metadata: unavailable")
        if self.language:
            lines.append(f"Primary language: {self.language}")
        lines.append(f"\nTask statement:\n{self.statement}")
        if not self.stats.empty:
            lines.append(f"\nChanged files: {', '.join(self.stats.files + self.stats.test_files)} "
                         f"(+{self.stats.added}/-{self.stats.removed} lines, {self.stats.hunks} hunks)")
        if self.patch_excerpt:
            lines.append(f"\nCode change excerpt:\n{self.patch_excerpt}")
        if self.test_excerpt:
            lines.append(f"\nTest change excerpt:\n{self.test_excerpt}")
        if self.actions:
            lines.append(f"\nAgent actions:\n{self.actions}")
        if self.observations:
            lines.append(f"\nTool observations:\n{self.observations}")
        if self.verification:
            lines.append(f"\nVerification outcome: {self.verification}")
        return "\n".join(lines)

    def digest(self) -> str:
        """Stable hash of the evidence (cache key component)."""
        payload = json.dumps(asdict(self), sort_keys=True, default=list)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _str_field(row: Mapping[str, Any], name: str, required: bool) -> str:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise EvidenceError(name, "is missing or empty")
        return ""
    if not isinstance(value, str):
        raise EvidenceError(name, f"must be a string, got {type(value).__name__}")
    return value


def _metadata(row: Mapping[str, Any]) -> tuple[str, tuple[str, ...], str]:
    meta = row.get("repo_metadata") or row.get("metadata") or {}
    if not isinstance(meta, Mapping):
        meta = {}
    desc = row.get("repo_description") or meta.get("description") or ""
    topics = row.get("repo_topics") or meta.get("topics") or ()
    if isinstance(topics, str):
        topics = [t.strip() for t in topics.split(",") if t.strip()]
    lang = row.get("repo_language") or meta.get("language") or meta.get("primary_language") or ""
    return str(desc), tuple(str(t) for t in topics), str(lang)


def from_issue_change(row: Mapping[str, Any]) -> Evidence:
    """Issue–change adapter. Requires ``instance_id``, ``repo`` and ``problem_statement``.

    Optional: ``patch``, ``test_patch``, ``hints_text`` and repository metadata given as
    ``repo_description`` / ``repo_topics`` / ``repo_language`` or a ``repo_metadata`` mapping
    (``description``, ``topics``, ``language``).
    """
    if not isinstance(row, Mapping):
        raise EvidenceError("<row>", f"expected a JSON object, got {type(row).__name__}")
    iid = _str_field(row, "instance_id", True)
    repo = _str_field(row, "repo", True)
    statement = _str_field(row, "problem_statement", True)
    patch = _str_field(row, "patch", False)
    test_patch = _str_field(row, "test_patch", False)
    desc, topics, lang = _metadata(row)
    stats = patch_stats(patch + "\n" + test_patch)
    card = _card(row)
    return Evidence(
        kind="issue_change", instance_id=iid, repo=repo, statement=_excerpt(statement, STATEMENT_CHARS),
        description=desc, topics=topics, language=lang,
        patch_excerpt=_changed_lines_excerpt(patch, PATCH_EXCERPT_CHARS),
        test_excerpt=_changed_lines_excerpt(test_patch, TEST_EXCERPT_CHARS), stats=stats, card=card,
    )


def _card(row: Mapping[str, Any]) -> RepoCard | None:
    """The row's ``repo_card`` (a card dict, set by :class:`~swetrain.label.cards.CardStore`), if any."""
    given = row.get("repo_card")
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise EvidenceError("repo_card", f"must be a card object, got {type(given).__name__}")
    card = RepoCard.from_dict({"repo": row.get("repo") or "", **given})
    return None if card.empty else card


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def _as_mapping(obj: Any) -> Mapping[str, Any]:
    if isinstance(obj, Mapping):
        return obj
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if hasattr(obj, "__dict__"):
        return vars(obj)
    raise EvidenceError("<trajectory>", f"expected a mapping or record object, got {type(obj).__name__}")


def from_trajectory(trajectory: Any, repo: str | None = None, metadata: Mapping[str, Any] | None = None) -> Evidence:
    """Trajectory adapter: user request, agent actions, observations, edits and verification.

    Accepts a mapping (or pydantic/dataclass record) with ``messages`` in OpenAI chat form (roles
    system/user/assistant/tool; assistant ``tool_calls`` with ``function.name``/``arguments``),
    plus optional ``repo``, ``instance_id``/``task_id``, ``final_patch``/``patch`` and ``verdict``
    (a mapping with ``resolved``/``status``) or ``resolved``.
    """
    t = _as_mapping(trajectory)
    messages = t.get("messages")
    if not isinstance(messages, list) or not messages:
        raise EvidenceError("messages", "a trajectory needs a non-empty list of chat messages")
    task = t.get("task") if isinstance(t.get("task"), Mapping) else {}
    repo = repo or t.get("repo") or task.get("repo") or ""
    iid = str(t.get("instance_id") or t.get("task_id") or task.get("instance_id") or "")
    if not repo:
        raise EvidenceError("repo", "a trajectory needs the repository name (field 'repo' or argument)")
    users = [_content_text(m.get("content")) for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not users or not users[0].strip():
        raise EvidenceError("messages", "no user request (first 'user' message) found")
    actions: list[str] = []
    observations: list[str] = []
    edits: list[str] = []
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role == "assistant":
            for call in m.get("tool_calls") or []:
                fn = (call.get("function") or {}) if isinstance(call, Mapping) else {}
                name = fn.get("name", "?")
                args = fn.get("arguments", "")
                args = args if isinstance(args, str) else json.dumps(args)
                actions.append(f"{name}({args[:200]})")
                if name in ("file_editor", "str_replace_editor", "edit", "write_file", "apply_patch"):
                    edits.append(args[:400])
        elif role == "tool":
            observations.append(_content_text(m.get("content"))[:300])
    patch = t.get("final_patch") or t.get("patch") or ""
    verdict = t.get("verdict")
    if verdict is not None and not isinstance(verdict, Mapping):
        verdict = _as_mapping(verdict)
    if isinstance(verdict, Mapping):
        verification = f"resolved={verdict.get('resolved')} status={verdict.get('status', '')}".strip()
    elif "resolved" in t:
        verification = f"resolved={t.get('resolved')}"
    else:
        verification = ""
    meta = dict(metadata or {})
    desc, topics, lang = _metadata({**t, "repo_metadata": meta or t.get("repo_metadata") or {}})
    stats = patch_stats(patch if isinstance(patch, str) else "")
    return Evidence(
        kind="trajectory", instance_id=iid, repo=str(repo), statement=_excerpt(users[0], STATEMENT_CHARS),
        description=desc, topics=topics, language=lang,
        patch_excerpt=_changed_lines_excerpt(patch, PATCH_EXCERPT_CHARS) if isinstance(patch, str) else "",
        actions=_excerpt("\n".join(actions + [f"edit: {e}" for e in edits]), TRAJ_EXCERPT_CHARS),
        observations=_excerpt("\n".join(observations), TRAJ_EXCERPT_CHARS),
        verification=verification, stats=stats,
    )
