"""LLM backend: any OpenAI-compatible chat endpoint over plain HTTP (urllib).

Stage 1 sends the L1 families of both semantic axes (name, source framework, description) and the
auxiliary value sets; stage 2 sends the decision records (rule, signals, boundaries) of the
children of the predicted L1s and of the 12 scale levels. Replies must be one JSON object; an
invalid reply (not JSON, missing keys, labels outside the hierarchy) is sent back with the list of
problems and retried up to ``max_retries`` times. Validated replies are cached on disk keyed by the
SHA-256 of (model, prompt version, stage, rendered evidence and, for stage 2, the stage-1 result).
Instances are annotated concurrently by a thread pool.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import threading
import time
import urllib.error
import uuid
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from swetrain.label.adapters import Evidence
from swetrain.label.offline import Stage1, Stage2
from swetrain.label.taxonomy import SEMANTIC_AXES, SCALE_DIMENSIONS, UNSPECIFIED, Taxonomy

PROMPT_VERSION = "label-v2"  # v2: the repository card in the evidence; no worked example in the compact prompt
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.M)
_PROBE = Evidence(kind="issue_change", instance_id="probe", repo="probe/probe", statement="probe")


class LLMError(RuntimeError):
    """The endpoint failed or never returned a valid answer; names the instance and the problems."""


def repair_json(text: str) -> dict[str, Any] | None:
    """Best-effort parse of a model's JSON object: code fences, prose around it, single quotes,
    Python literals, trailing commas and unclosed braces/brackets/strings are repaired."""
    text = _FENCE.sub("", text.strip()).strip()
    start = text.find("{")
    if start < 0:
        return None
    body = text[start:]
    candidates = [body]
    end = body.rfind("}")
    if end >= 0:
        candidates.insert(0, body[: end + 1])
    for cand in candidates:
        for fixed in (cand, _repair(cand)):
            try:
                obj = json.loads(fixed)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def _repair(text: str) -> str:
    if '"' not in text and "'" in text:
        text = text.replace("'", '"')
    text = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", text)))
    text = re.sub(r",\s*([}\]])", r"\1", text)
    stack: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            esc = (ch == "\\") and not esc
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if in_str:
        text += '"'
    text = re.sub(r",\s*$", "", text)
    return text + "".join(reversed(stack))


def _norm(value: str) -> str:
    return re.sub(r"[\s_-]+", "_", value.strip().lower())


def snap(value: Any, allowed: Any) -> Any:
    """An allowed label equal to ``value`` up to case and ``-``/``_``/space separators (else value)."""
    if not isinstance(value, str):
        return value
    if value in allowed:
        return value
    table = {_norm(a): a for a in allowed}
    return table.get(_norm(value), value)


class LLMBackend:
    """Two-stage annotation through an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "llm"
    version = PROMPT_VERSION

    def __init__(self, taxonomy: Taxonomy, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 cache_dir: str | Path | None = None, max_retries: int = 3, workers: int = 4, timeout: float = 120.0,
                 temperature: float = 0.0, json_mode: bool = True, max_tokens: int | None = 400, connect_retries: int = 3,
                 prompt: str = "full"):
        self.taxonomy = taxonomy
        self.base_url = (base_url or os.environ.get("SWETRAIN_LABEL_BASE_URL") or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        if not self.base_url:
            raise ValueError("llm backend needs an endpoint: pass base_url (e.g. http://127.0.0.1:8000/v1) or set SWETRAIN_LABEL_BASE_URL")
        self.model = model or os.environ.get("SWETRAIN_LABEL_MODEL") or "default"
        self.api_key = api_key if api_key is not None else os.environ.get("SWETRAIN_LABEL_API_KEY", "")
        if cache_dir is None:
            from swetrain.paths import cache_dir as _cache

            cache_dir = _cache("label", "llm")
        self.cache_dir = Path(cache_dir)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.max_retries = max_retries
        self.workers = max(1, workers)
        self.timeout = timeout
        self.temperature = temperature
        self.json_mode = json_mode
        self.max_tokens = max_tokens
        self.connect_retries = connect_retries
        if prompt not in ("full", "compact"):
            raise ValueError(f"prompt must be 'full' or 'compact', got {prompt!r}")
        self.prompt = prompt
        self.stats = {"requests": 0, "invalid": 0, "cache_hits": 0, "repaired": 0}
        self._prompt_key = self.prompt_hash()
        self._stats_lock = threading.Lock()

    # ---- prompts ------------------------------------------------------------------------------
    @staticmethod
    def _compact_evidence(ev: Evidence) -> str:
        files = ", ".join((ev.stats.files + ev.stats.test_files)[:8])
        lines = [f"Repository: {ev.repo}" + (f" ({ev.language})" if ev.language else "")]
        if ev.description.strip() or ev.topics:
            lines.append(f"Description: {' '.join([ev.description, ' '.join(ev.topics)]).strip()[:200]}")
        if ev.card is not None and not ev.card.empty:
            lines.append(f"What the repository says it is (its README/package metadata): {ev.card.about()[:500]}")
            if ev.card.dependencies:
                lines.append(f"Dependencies: {', '.join(ev.card.dependencies[:15])}")
        lines.append(f"Issue: {ev.statement[:900]}")
        if files:
            lines.append(f"Changed files: {files} (+{ev.stats.added}/-{ev.stats.removed} lines)")
        return "\n".join(lines)

    @staticmethod
    def _gloss(text: str, words: int = 8) -> str:
        parts = text.split()
        return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")

    def _stage1_compact(self, ev: Evidence) -> list[dict[str, str]]:
        tx = self.taxonomy
        lines = ["You annotate software-engineering tasks (compact prompt). Answer with ONE JSON object and nothing else."]
        for axis in SEMANTIC_AXES:
            lines.append(f"{axis}_l1 is one of:")
            lines += [f"- {f.name}: {self._gloss(f.description)}" for f in tx.families(axis).values()]
        aux = tx.aux
        lines += [f"code_language is one of: {', '.join(aux.code_languages)}",
                  f"task_spec_type is one of: {', '.join(aux.task_spec_types)}",
                  f"dependency_context is one of: {', '.join(aux.dependency_contexts)}",
                  "The domain describes what the repository is (use what the repository says it is); the task type describes what the change does.",
                  'Reply with the keys task_type_l1, domain_l1, code_language, task_spec_type, dependency_context; '
                  'each value is one name from its list above, chosen for THIS task.']
        # no worked example: a small model copies an example's values as its answer (issue 33)
        return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": self._compact_evidence(ev)}]

    def _stage2_compact(self, ev: Evidence, s1: Stage1) -> list[dict[str, str]]:
        tx = self.taxonomy
        lines = ["You refine a software-engineering task annotation (compact prompt). Answer with ONE JSON object and nothing else."]
        for axis, l1 in (("task_type", s1.task_type_l1), ("domain", s1.domain_l1)):
            kids = tx.family(axis, l1).child_names
            lines.append(f"{axis} L1 = {l1}. {axis}_l2 is a list of 1-3 of: {', '.join(kids) if kids else ''}"
                         + (" or " if kids else "") + f"[\"{UNSPECIFIED}\"]")
        for dim in SCALE_DIMENSIONS:
            lines.append(f"{dim} is one of: {', '.join(tx.levels(dim))}")
        lines.append("Reply with the keys task_type_l2 and domain_l2 (lists of names from their lists above) and scope, complexity, "
                     "time (one name each), chosen for THIS task.")
        return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": self._compact_evidence(ev)}]

    def stage1_messages(self, ev: Evidence) -> list[dict[str, str]]:
        if self.prompt == "compact":
            return self._stage1_compact(ev)
        tx = self.taxonomy
        lines = ["You annotate software-engineering tasks. Answer with ONE JSON object and nothing else.", ""]
        for axis in SEMANTIC_AXES:
            lines.append(f"{tx.titles.get(axis, axis)} L1 labels (choose exactly one):")
            for f in tx.families(axis).values():
                lines.append(f"- {f.name}: {f.description} [source: {f.source_framework}]")
            lines.append("")
        aux = tx.aux
        lines += [
            "Repository purpose and metadata are the primary evidence for the domain; change content resolves multi-purpose repositories.",
            "If repository metadata is unavailable, infer the domain from the repository name and task/change content and say so in domain_rationale.",
            f"code_language: one of {list(aux.code_languages)}",
            f"task_spec_type: one of {list(aux.task_spec_types)} (specific = verifiable expected behaviour is stated)",
            f"dependency_context: one of {list(aux.dependency_contexts)} (what beyond the statement is needed)",
            "",
            'Reply as {"task_type_l1": ..., "task_type_rationale": ..., "domain_l1": ..., "domain_rationale": ..., '
            '"code_language": ..., "task_spec_type": ..., "dependency_context": ...}',
        ]
        return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": ev.render()}]

    def stage2_messages(self, ev: Evidence, s1: Stage1) -> list[dict[str, str]]:
        if self.prompt == "compact":
            return self._stage2_compact(ev, s1)
        tx = self.taxonomy
        lines = ["You refine a software-engineering task annotation. Answer with ONE JSON object and nothing else.", ""]
        for axis, l1 in (("task_type", s1.task_type_l1), ("domain", s1.domain_l1)):
            fam = tx.family(axis, l1)
            lines.append(f"{axis} L1 = {l1}. Choose 1-3 L2 children below, or [\"{UNSPECIFIED}\"] if none is supported by the evidence:")
            if not fam.children:
                lines.append(f"  ({l1} has no children: answer [\"{UNSPECIFIED}\"])")
            for c in fam.children:
                lines.append(f"- {c.name}: rule: {c.rule} signals: {', '.join(c.signals[:6])}. boundaries: {c.boundaries} [source: {c.source}]")
            lines.append("")
        for dim in SCALE_DIMENSIONS:
            d = tx.scales[dim]
            lines.append(f"{dim} ({d.description}) - one of:")
            for lv in d.children:
                lines.append(f"- {lv.name}: {lv.rule} boundaries: {lv.boundaries}")
            lines.append("")
        lines.append('Reply as {"task_type_l2": [...], "task_type_l2_rationale": ..., "domain_l2": [...], "domain_l2_rationale": ..., '
                     '"scope": ..., "complexity": ..., "time": ..., "scale_rationale": ...}')
        return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": ev.render()}]

    def prompt_hash(self) -> str:
        """SHA-256 (16 hex) of the prompt templates: the stage-1 system prompt and the stage-2 prompt
        code, with the prompt version; a changed prompt gives a different hash (and cache keys)."""
        import inspect

        parts = [PROMPT_VERSION, self.prompt, self.stage1_messages(_PROBE)[0]["content"], inspect.getsource(type(self).stage2_messages),
                 inspect.getsource(type(self)._stage2_compact)]
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]

    def provenance(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url, "prompt_version": PROMPT_VERSION, "prompt": self.prompt, "prompt_sha256": self.prompt_hash(),
                "temperature": self.temperature, "max_retries": self.max_retries}

    # ---- validation ---------------------------------------------------------------------------
    def _snap_stage1(self, obj: dict[str, Any]) -> None:
        tx = self.taxonomy
        for key, allowed in (("task_type_l1", tx.families("task_type")), ("domain_l1", tx.families("domain")),
                             ("code_language", tx.aux.code_languages), ("task_spec_type", tx.aux.task_spec_types),
                             ("dependency_context", tx.aux.dependency_contexts)):
            obj[key] = snap(obj.get(key), allowed)

    def _snap_stage2(self, obj: dict[str, Any], s1: Stage1) -> None:
        tx = self.taxonomy
        for axis, l1 in (("task_type", s1.task_type_l1), ("domain", s1.domain_l1)):
            value = obj.get(f"{axis}_l2")
            allowed = (*tx.family(axis, l1).child_names, UNSPECIFIED)
            if isinstance(value, str):
                value = [value]
            if isinstance(value, list):
                obj[f"{axis}_l2"] = [snap(v.split(".", 1)[1] if isinstance(v, str) and v.startswith(l1 + ".") else v, allowed) for v in value]
        for dim in SCALE_DIMENSIONS:
            obj[dim] = snap(obj.get(dim), tx.levels(dim))

    def check_stage1(self, obj: dict[str, Any]) -> list[str]:
        tx = self.taxonomy
        self._snap_stage1(obj)
        problems = []
        for key, allowed in (("task_type_l1", tx.families("task_type")), ("domain_l1", tx.families("domain")),
                             ("code_language", tx.aux.code_languages), ("task_spec_type", tx.aux.task_spec_types),
                             ("dependency_context", tx.aux.dependency_contexts)):
            if obj.get(key) not in allowed:
                problems.append(f"{key} must be one of {list(allowed)}, got {obj.get(key)!r}")
        return problems

    def check_stage2(self, obj: dict[str, Any], s1: Stage1) -> list[str]:
        tx = self.taxonomy
        self._snap_stage2(obj, s1)
        problems = []
        for axis, l1 in (("task_type", s1.task_type_l1), ("domain", s1.domain_l1)):
            value = obj.get(f"{axis}_l2")
            kids = tx.family(axis, l1).child_names
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not 1 <= len(value) <= 3:
                problems.append(f"{axis}_l2 must be a list of 1-3 labels")
                continue
            bad = [v for v in value if v != UNSPECIFIED and v not in kids]
            if bad:
                problems.append(f"{axis}_l2 {bad} are not children of {l1!r}; allowed: {list(kids) or []} or [{UNSPECIFIED!r}]")
            if UNSPECIFIED in value and len(value) > 1:
                problems.append(f"{axis}_l2: {UNSPECIFIED!r} cannot be combined with other labels")
        for dim in SCALE_DIMENSIONS:
            if obj.get(dim) not in tx.levels(dim):
                problems.append(f"{dim} must be one of {list(tx.levels(dim))}, got {obj.get(dim)!r}")
        return problems

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    # ---- transport ----------------------------------------------------------------------------
    def _post(self, messages: list[dict[str, str]]) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST")
        delay = 0.5
        tries = self.connect_retries + 1
        for attempt in range(tries):
            self._count("requests")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    payload = json.loads(resp.read().decode("utf-8"))
                return payload["choices"][0]["message"]["content"] or ""
            except urllib.error.HTTPError as exc:
                if exc.code in (429, 500, 502, 503, 504) and attempt < tries - 1:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise LLMError(f"{self.base_url}: HTTP {exc.code}: {exc.read()[:300]!r}") from None
            except urllib.error.URLError as exc:
                if attempt < tries - 1:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise LLMError(f"{self.base_url}: cannot reach the endpoint: {exc.reason}") from None
            except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
                # raised while waiting for or reading the response (urllib wraps only the sending)
                if attempt < tries - 1:
                    time.sleep(delay)
                    delay *= 2
                    continue
                what = f"no answer within {self.timeout:g} s" if isinstance(exc, TimeoutError) else f"connection failed ({exc!r})"
                raise LLMError(f"{self.base_url}: {what}") from None
            except (KeyError, IndexError, TypeError, ValueError) as exc:  # ValueError: bad JSON or UTF-8
                raise LLMError(f"{self.base_url}: not an OpenAI chat completion response ({exc!r})") from None
        raise LLMError(f"{self.base_url}: endpoint kept failing")

    def _parse(self, text: str) -> dict[str, Any] | None:
        try:
            obj = json.loads(_FENCE.sub("", text.strip()).strip())
            if isinstance(obj, dict):
                return obj
        except json.JSONDecodeError:
            pass
        obj = repair_json(text)
        if obj is not None:
            self._count("repaired")
        return obj

    def _ask(self, key_parts: list[str], messages: list[dict[str, str]], check, where: str) -> dict[str, Any]:
        key = hashlib.sha256("\x00".join([self.model, PROMPT_VERSION, self._prompt_key, *key_parts]).encode("utf-8")).hexdigest()
        path = self.cache_dir / f"{key}.json"
        if path.exists():
            try:
                obj = json.loads(path.read_text(encoding="utf-8"))
                if not check(obj):
                    self._count("cache_hits")
                    return obj
            except (OSError, json.JSONDecodeError):
                pass  # unreadable cache entry: ask again and overwrite it
        convo = list(messages)
        problems: list[str] = []
        for _ in range(self.max_retries + 1):
            reply = self._post(convo)
            obj = self._parse(reply)
            problems = ["reply is not a JSON object"] if obj is None else check(obj)
            if not problems:
                tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")  # threads may share a key
                tmp.write_text(json.dumps(obj), encoding="utf-8")
                tmp.replace(path)
                return obj
            self._count("invalid")
            convo = convo + [{"role": "assistant", "content": reply},
                             {"role": "user", "content": "Your answer was invalid: " + "; ".join(problems) + ". Answer again with one corrected JSON object only."}]
        raise LLMError(f"{where}: no valid answer after {self.max_retries + 1} attempts: {'; '.join(problems)}")

    # ---- stages -------------------------------------------------------------------------------
    def _one_stage1(self, ev: Evidence) -> Stage1:
        obj = self._ask(["stage1", ev.digest()], self.stage1_messages(ev), self.check_stage1, f"stage 1 of {ev.instance_id or ev.repo}")
        return Stage1(task_type_l1=obj["task_type_l1"], domain_l1=obj["domain_l1"], code_language=obj["code_language"],
                      task_spec_type=obj["task_spec_type"], dependency_context=obj["dependency_context"],
                      task_type_rationale=f"stage 1 ({self.model}): {obj.get('task_type_rationale', '')}",
                      domain_rationale=f"stage 1 ({self.model}): {obj.get('domain_rationale', '')}")

    def _one_stage2(self, ev: Evidence, s1: Stage1) -> Stage2:
        obj = self._ask(["stage2", ev.digest(), s1.task_type_l1, s1.domain_l1], self.stage2_messages(ev, s1),
                        lambda o: self.check_stage2(o, s1), f"stage 2 of {ev.instance_id or ev.repo}")
        as_list = lambda v: [v] if isinstance(v, str) else list(v)  # noqa: E731
        return Stage2(task_type_l2=as_list(obj["task_type_l2"]), domain_l2=as_list(obj["domain_l2"]), scope=obj["scope"],
                      complexity=obj["complexity"], time=obj["time"],
                      task_type_rationale=f"stage 2: {obj.get('task_type_l2_rationale', '')}",
                      domain_rationale=f"stage 2: {obj.get('domain_l2_rationale', '')}",
                      scale_rationale=str(obj.get("scale_rationale", "")))

    def stage1(self, evs: Sequence[Evidence]) -> list[Stage1]:
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(self._one_stage1, evs))

    def stage2(self, evs: Sequence[Evidence], s1: Sequence[Stage1]) -> list[Stage2]:
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(self._one_stage2, evs, s1))
