"""Offline backend: decision-record signals plus packaged sentence embeddings; no network.

Stage 1 scores every L1 family of each semantic axis:

    score(f) = sum_k w_k * |hits_k(f)| / sqrt(|s+(f)| / 8 + 1)  +  beta * (cos(e(x), e(f)) - mean_f' cos(e(x), e(f')))

with hits counted separately in each evidence field k (repository name/metadata, statement, change)
and weighted by w_k (domain: metadata 3, name 2, statement 1, change 0.5; task type: statement 1,
change 0.5), s+(f) the family's signals plus its children's (children at half weight), e(.) the
normalised MiniLM embedding and beta = BETA. Structural evidence from the changed paths (only tests,
only docs, only CI files, ...) adds fixed bonuses. Stage 2 scores only the children of the chosen L1
in the same way and keeps 1-3 of them, or "unspecified" when no child has signal support.
Scale levels come from the diff structure (files, top-level packages, changed lines, hunks) with the
scale decision records' signals as modifiers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from swetrain.label.adapters import Evidence
from swetrain.label.signals import SignalSet
from swetrain.label.taxonomy import SEMANTIC_AXES, UNSPECIFIED, Family, Taxonomy

BETA = 6.0  # weight of the centred embedding similarity against signal hits
CHILD_WEIGHT = 0.5
DOMAIN_FIELD_WEIGHTS = {"metadata": 3.0, "name": 2.0, "statement": 1.0, "change": 0.5}
TASK_FIELD_WEIGHTS = {"statement": 1.0, "change": 0.5}
OTHER_THRESHOLD = 1.0  # a domain L1 needs at least this score, else "other"
L2_KEEP_RATIO = 0.6  # keep further L2 children scoring >= this fraction of the best child


_PROTO_CACHE: dict[tuple, dict[str, np.ndarray]] = {}  # label prototype embeddings per (embedder, taxonomy)


@dataclass
class Stage1:
    task_type_l1: str
    domain_l1: str
    code_language: str
    task_spec_type: str
    dependency_context: str
    task_type_rationale: str = ""
    domain_rationale: str = ""
    domain_scores: dict[str, float] | None = None  # per-L1 scores (offline), used for repository pooling
    vec: Any = None  # the instance embedding (offline), reused by stage 2
    confidence: dict[str, float] | None = None  # calibrated per-axis confidence (learned backend)


@dataclass
class Stage2:
    task_type_l2: list[str]
    domain_l2: list[str]
    scope: str
    complexity: str
    time: str
    task_type_rationale: str = ""
    domain_rationale: str = ""
    scale_rationale: str = ""
    confidence: dict[str, float] | None = None  # calibrated per-axis confidence (learned backend)


@dataclass
class _Scored:
    name: str
    score: float
    hits: list[str] = field(default_factory=list)
    sim: float | None = None


def _fmt(scored: _Scored) -> str:
    bits = []
    if scored.hits:
        shown = ", ".join(repr(h) for h in scored.hits[:4]) + (" …" if len(scored.hits) > 4 else "")
        bits.append(f"signals {shown}")
    if scored.sim is not None:
        bits.append(f"similarity {scored.sim:.2f}")
    return f"{scored.name} ({'; '.join(bits) or 'no signal'}; score {scored.score:.2f})"


#: paths of documentation, CI configuration, packaging metadata and deployment files (change kinds)
DOC_PATH = re.compile(r"(^|/)(docs?|documentation)/|\.(rst|md|txt|adoc)$", re.I)
CI_PATH = re.compile(r"(^|/)\.github/workflows/|\.travis\.yml$|\.gitlab-ci\.yml$|azure-pipelines|\.circleci/", re.I)
PKG_PATH = re.compile(r"(^|/)(setup\.py|setup\.cfg|pyproject\.toml|MANIFEST\.in|package\.json|Cargo\.toml)$")
DEPLOY_PATH = re.compile(r"(^|/)(Dockerfile[^/]*|docker-compose[^/]*\.ya?ml)$|(^|/)(helm|k8s|deploy)/")
_CODE_FENCE = re.compile(r"```\s*([A-Za-z+#-]+)")
_FILE_MENTION = re.compile(r"\b[\w/.-]+(\.[A-Za-z]{1,6})\b")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s+at [\w.$]+\(|panic:|Error:|Exception", re.M)
_ENV_SIGNAL = re.compile(
    r"\b(pip install|conda|virtualenv|venv|docker|python\s?\d\.\d+|version \d+(\.\d+)+|v\d+\.\d+(\.\d+)?|"
    r"operating system|windows|macos|mac os|linux|ubuntu|fedora|debian|centos|environment variable|installed|"
    r"node(js)? \d+|jdk|compiler version|requirements\.txt|dependency|dependencies|upgrade|upgrading|release)\b",
    re.I,
)
_CODE_REF = re.compile(r"`[^`\n]+`|\w+\(\)|\b\w+\.\w+\(|\bdef \w+|\bclass \w+|\.(py|js|ts|go|rs|java|rb|php|c|cpp)\b")
_SPEC_SIGNAL = re.compile(
    r"expected (behaviou?r|result|output)|actual (behaviou?r|result|output)|steps to reproduce|to reproduce|"
    r"minimal (example|reproduc)|should (return|raise|be|produce|output)|instead of|```", re.I,
)


def module_key(path: str) -> str:
    """The module a changed file belongs to: its first two folders (``"."`` for a top-level file)."""
    parts = PurePosixPath(path).parts[:-1]
    return "/".join(parts[:2]) if parts else "."


class OfflineBackend:
    """Signals + packaged embeddings. ``use_embeddings=False`` gives the signals-only baseline."""

    name = "offline"
    version = "heuristic-v1"

    def __init__(self, taxonomy: Taxonomy, use_embeddings: bool = True, embedder=None):
        self.taxonomy = taxonomy
        self.use_embeddings = use_embeddings
        self.use_card = True  # the repository card counts as repository metadata (the learned features turn this off)
        self._embedder = embedder
        self._fam_signals: dict[str, dict[str, tuple[SignalSet, SignalSet, float]]] = {}
        self._child_signals: dict[str, SignalSet] = {}
        for axis in SEMANTIC_AXES:
            table = {}
            for fam in taxonomy.families(axis).values():
                own = SignalSet.of(fam.name, fam.signals)
                kids = SignalSet.of(fam.name, [s for c in fam.children for s in c.signals])
                norm = math.sqrt((len(own.patterns) + CHILD_WEIGHT * len(kids.patterns)) / 8.0 + 1.0)
                table[fam.name] = (own, kids, norm)
                for c in fam.children:
                    self._child_signals[f"{axis}:{fam.name}.{c.name}"] = SignalSet.of(c.name, c.signals)
            self._fam_signals[axis] = table
        self._scale_signals = {
            f"{dim}.{lv.name}": SignalSet.of(lv.name, lv.signals) for dim, d in taxonomy.scales.items() for lv in d.children
        }
        self._protos: dict[str, np.ndarray] | None = None

    def provenance(self) -> dict[str, Any]:
        return {"variant": "heuristic signals + embeddings" if self.use_embeddings else "heuristic signals only"}

    # ---- embeddings ---------------------------------------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            from swetrain.label.embed import shared_embedder

            self._embedder = shared_embedder()
        return self._embedder

    def _prototypes(self) -> dict[str, np.ndarray]:
        cache_key = (id(self.embedder), str(self.taxonomy.directory), self.taxonomy.counts()["decision_records"])
        if self._protos is None and cache_key in _PROTO_CACHE:
            self._protos = _PROTO_CACHE[cache_key]
        if self._protos is None:
            keys: list[str] = []
            texts: list[str] = []
            for axis in SEMANTIC_AXES:
                for fam in self.taxonomy.families(axis).values():
                    keys.append(f"{axis}:{fam.name}")
                    texts.append(fam.prototype())
                    for c in fam.children:
                        keys.append(f"{axis}:{fam.name}.{c.name}")
                        texts.append(c.prototype())
            vecs = self.embedder.encode(texts, max_length=128)
            self._protos = dict(zip(keys, vecs))
            _PROTO_CACHE[cache_key] = self._protos
        return self._protos

    @staticmethod
    def instance_text(ev: Evidence) -> str:
        meta = " ".join([ev.description, " ".join(ev.topics)]).strip()
        head = f"{ev.repo_words}. {meta}. " if meta else f"{ev.repo_words}. "
        return head + ev.statement[:700]

    def _embed(self, evs: Sequence[Evidence]) -> np.ndarray | None:
        if not self.use_embeddings:
            return None
        return self.embedder.encode([self.instance_text(e) for e in evs])

    # ---- scoring ------------------------------------------------------------------------------
    def _fields(self, ev: Evidence, axis: str) -> dict[str, str]:
        if axis == "domain":
            meta = ev.metadata_text if self.use_card else f"{ev.description} {' '.join(ev.topics)}"
            return {"metadata": meta, "name": ev.repo_words, "statement": ev.statement, "change": ev.change_text()}
        return {"statement": ev.statement, "change": ev.change_text()}

    def _score_families(self, ev: Evidence, axis: str, vec: np.ndarray | None) -> list[_Scored]:
        weights = DOMAIN_FIELD_WEIGHTS if axis == "domain" else TASK_FIELD_WEIGHTS
        fields = self._fields(ev, axis)
        out: list[_Scored] = []
        for name, (own, kids, norm) in self._fam_signals[axis].items():
            total = 0.0
            hits: list[str] = []
            for key, text in fields.items():
                if not text:
                    continue
                h_own = own.hits(text)
                h_kid = kids.hits(text)
                total += weights[key] * (len(h_own) + CHILD_WEIGHT * len(set(h_kid)))
                hits += [h for h in h_own + h_kid if h not in hits]
            out.append(_Scored(name, total / norm, hits))
        if axis == "task_type":
            self._structural_bonus(ev, out)
        if vec is not None:
            protos = self._prototypes()
            sims = np.array([float(vec @ protos[f"{axis}:{s.name}"]) for s in out])
            centred = sims - sims.mean()
            for s, raw, c in zip(out, sims, centred):
                s.sim = raw
                s.score += BETA * c
        out.sort(key=lambda s: -s.score)
        return out

    @staticmethod
    def _structural_bonus(ev: Evidence, scored: list[_Scored]) -> None:
        by = {s.name: s for s in scored}
        code, tests = ev.stats.files, ev.stats.test_files
        if not code and tests:
            key = "test-add" if re.search(r"\b(add|missing|new|more) tests?\b|\buntested\b", ev.statement, re.I) else "test-fix"
            by[key].score += 3.0
            by[key].hits.append("<only test files changed>")
        if code and all(DOC_PATH.search(p) for p in code):
            by["user-docs"].score += 3.0
            by["user-docs"].hits.append("<only documentation files changed>")
        if code and all(CI_PATH.search(p) for p in code):
            by["ci-fix"].score += 3.0
            by["ci-fix"].hits.append("<only CI files changed>")
        if code and all(PKG_PATH.search(p) for p in code):
            by["packaging"].score += 2.0
            by["packaging"].hits.append("<only packaging files changed>")
        if code and any(DEPLOY_PATH.search(p) for p in code):
            by["deployment"].score += 2.0
            by["deployment"].hits.append("<deployment files changed>")

    def _score_children(self, ev: Evidence, axis: str, fam: Family, vec: np.ndarray | None) -> list[_Scored]:
        text = ev.statement + "\n" + ev.change_text()
        if axis == "domain":
            meta = ev.metadata_text if self.use_card else f"{ev.description} {' '.join(ev.topics)}"
            text = f"{ev.repo_words} {meta}\n" + text
        protos = self._prototypes() if vec is not None else None
        out = []
        for c in fam.children:
            hits = self._child_signals[f"{axis}:{fam.name}.{c.name}"].hits(text)
            score = len(hits) / math.sqrt(len(c.signals) / 6.0 + 1.0)
            out.append(_Scored(c.name, score, hits, None))
        if protos is not None and out:
            sims = np.array([float(vec @ protos[f"{axis}:{fam.name}.{s.name}"]) for s in out])
            centred = sims - sims.mean()
            for s, raw, cen in zip(out, sims, centred):
                s.sim = raw
                s.score += 0.5 * BETA * cen
        out.sort(key=lambda s: -s.score)
        return out

    @staticmethod
    def _pick_children(scored: list[_Scored]) -> list[_Scored]:
        supported = [s for s in scored if s.hits]
        if not supported or supported[0].score <= 0:
            return []
        best = supported[0].score
        keep = [s for s in supported if s.score >= L2_KEEP_RATIO * best and s.score > 0]
        return keep[:3]

    # ---- auxiliary metadata -------------------------------------------------------------------
    def code_language(self, ev: Evidence) -> tuple[str, str]:
        aux = self.taxonomy.aux
        counts: dict[str, int] = {}
        for p in ev.stats.files or ev.stats.test_files:
            suffix = PurePosixPath(p).suffix.lower()
            lang = aux.extensions.get(suffix)
            if lang is None and suffix:
                lang = "other"
            if lang:
                counts[lang] = counts.get(lang, 0) + 1
        if counts:
            real = {k: v for k, v in counts.items() if k != "other"} or counts
            return max(real, key=lambda k: real[k]), "changed file extensions"
        if ev.language:
            return aux.normalise_language(ev.language), "repository primary language"
        fences = [aux.normalise_language(m) for m in _CODE_FENCE.findall(ev.statement)]
        fences = [f for f in fences if f not in ("other", "unknown")]
        if fences:
            return max(set(fences), key=fences.count), "code blocks in the statement"
        mentioned = [aux.extensions.get(m.lower()) for m in _FILE_MENTION.findall(ev.statement)]
        mentioned = [m for m in mentioned if m]
        if mentioned:
            return max(set(mentioned), key=mentioned.count), "file names in the statement"
        return "unknown", "no language evidence"

    @staticmethod
    def task_spec_type(ev: Evidence) -> str:
        s = ev.statement
        specific = len(_SPEC_SIGNAL.findall(s)) + (2 if _TRACEBACK.search(s) else 0) + min(len(_CODE_REF.findall(s)), 3)
        return "specific" if specific >= 3 and len(s) >= 120 else "fuzzy"

    @staticmethod
    def dependency_context(ev: Evidence) -> str:
        code = (not ev.stats.empty) or bool(_CODE_REF.search(ev.statement))
        env = len(_ENV_SIGNAL.findall(ev.statement)) >= 2
        if code and env:
            return "codebase+env"
        if code:
            return "codebase"
        return "env" if env else "none"

    # ---- scale --------------------------------------------------------------------------------
    def scale(self, ev: Evidence, task_l1: str) -> tuple[str, str, str, str]:
        st = ev.stats
        text = ev.statement
        sig = {k: s.hits(text) for k, s in self._scale_signals.items()}
        files = st.files or st.test_files
        lines = st.changed_lines
        if sig["scope.cross_repo"]:
            scope = "cross_repo"
        elif not files:
            scope = "cross_module" if sig["scope.cross_module"] else "multi_file_same_module" if sig["scope.multi_file_same_module"] else "single_file"
        elif len(files) == 1:
            scope = "single_file"
        elif len({module_key(p) for p in files}) == 1:
            scope = "multi_file_same_module"
        else:
            scope = "cross_module"
        design = bool(sig["complexity.design_decision"]) and task_l1 in {"feature", "enhancement", "deprecation", "refactor", "design-spec", "backward-compatibility", "from_scratch"}
        if st.empty:
            complexity = "design_decision" if design else "global_reasoning" if sig["complexity.global_reasoning"] else "mechanical" if sig["complexity.mechanical"] else "local_reasoning"
        elif design and lines >= 20:
            complexity = "design_decision"
        elif lines <= 2 and st.hunks <= 1 or (lines <= 6 and sig["complexity.mechanical"]):
            complexity = "mechanical"
        elif len(st.files) >= 3 or st.hunks >= 6 or lines >= 60 or scope == "cross_module":
            complexity = "global_reasoning"
        else:
            complexity = "local_reasoning"
        if st.empty:
            time = {"mechanical": "trivial_15min", "local_reasoning": "small_1h", "global_reasoning": "medium_4h", "design_decision": "medium_4h"}[complexity]
            if sig["time.large_4h_plus"]:
                time = "large_4h_plus"
        elif lines <= 4 and st.hunks <= 1 and complexity == "mechanical":
            time = "trivial_15min"
        elif lines <= 8 and st.hunks <= 2 and len(st.files) <= 1:
            time = "trivial_15min" if complexity in ("mechanical", "local_reasoning") else "small_1h"
        elif lines <= 40 and len(st.files) <= 2:
            time = "small_1h"
        elif lines <= 200 and len(st.files) <= 6:
            time = "medium_4h"
        else:
            time = "large_4h_plus"
        if st.empty:
            why = "no change evidence: levels from the statement's scale signals"
        else:
            why = f"{len(st.files)} code file(s) in {len({module_key(p) for p in st.files}) if st.files else 0} package dir(s), {len(st.test_files)} test file(s), +{st.added}/-{st.removed} lines, {st.hunks} hunk(s)"
        fired = [f"{k}: {', '.join(map(repr, v[:2]))}" for k, v in sig.items() if v]
        if fired:
            why += "; scale signals " + "; ".join(fired[:3])
        return scope, complexity, time, why

    # ---- the two stages -----------------------------------------------------------------------
    def stage1(self, evs: Sequence[Evidence]) -> list[Stage1]:
        vecs = self._embed(evs)
        out = []
        for i, ev in enumerate(evs):
            vec = None if vecs is None else vecs[i]
            tt = self._score_families(ev, "task_type", vec)
            dm = self._score_families(ev, "domain", vec)
            if dm[0].score < OTHER_THRESHOLD:
                chosen = _Scored("other", dm[0].score, [], None)
                d_rat = f"stage 1: other (best candidate {_fmt(dm[0])} below threshold {OTHER_THRESHOLD})"
            else:
                chosen = dm[0]
                d_rat = f"stage 1: {_fmt(dm[0])}; runner-up {_fmt(dm[1])}"
            lang, lang_why = self.code_language(ev)
            out.append(Stage1(
                task_type_l1=tt[0].name, domain_l1=chosen.name, code_language=lang,
                task_spec_type=self.task_spec_type(ev), dependency_context=self.dependency_context(ev),
                task_type_rationale=f"stage 1: {_fmt(tt[0])}; runner-up {_fmt(tt[1])}; language from {lang_why}",
                domain_rationale=d_rat, domain_scores={s.name: s.score for s in dm}, vec=vec,
            ))
        return out

    def stage2(self, evs: Sequence[Evidence], s1: Sequence[Stage1]) -> list[Stage2]:
        out = []
        for ev, st1 in zip(evs, s1):
            vec = st1.vec if self.use_embeddings else None
            if self.use_embeddings and vec is None:
                vec = self._embed([ev])[0]
            res: dict[str, tuple[list[str], str]] = {}
            for axis, l1 in (("task_type", st1.task_type_l1), ("domain", st1.domain_l1)):
                fam = self.taxonomy.family(axis, l1)
                if not fam.children:
                    res[axis] = ([UNSPECIFIED], f"stage 2: {l1} has no L2 children -> unspecified")
                    continue
                kept = self._pick_children(self._score_children(ev, axis, fam, vec))
                if not kept:
                    res[axis] = ([UNSPECIFIED], f"stage 2: no child of {l1} has signal support -> unspecified")
                else:
                    res[axis] = ([k.name for k in kept], "stage 2: " + "; ".join(_fmt(k) for k in kept))
            scope, complexity, time, why = self.scale(ev, st1.task_type_l1)
            out.append(Stage2(
                task_type_l2=res["task_type"][0], domain_l2=res["domain"][0], scope=scope, complexity=complexity, time=time,
                task_type_rationale=res["task_type"][1], domain_rationale=res["domain"][1], scale_rationale=why,
            ))
        return out
