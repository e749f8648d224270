"""The two-stage hierarchical Labeler (paper §3 and App. B.3).

Stage 1 predicts Task Type L1 and Repository Domain L1 together with the auxiliary metadata;
stage 2 picks 1-3 L2 labels only among the children of the predicted L1s (or "unspecified") and
the three scale levels. The assembled record is validated against the declared hierarchy; when the
evidence carries no repository metadata the domain rationale is marked as a fallback to the
repository name and task/change content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from swetrain.label.adapters import Evidence, from_issue_change, from_trajectory
from swetrain.label.offline import Stage1, Stage2
from swetrain.label.routing import route_of
from swetrain.label.schema import AxisLabel, Labels, validate_labels
from swetrain.label.taxonomy import Taxonomy, default_taxonomy

def card_provenance(ev: Evidence) -> dict[str, str] | None:
    """``{"source", "sha256"}`` of the repository card the labels were made with, or None (no card)."""
    if ev.card is None:
        return None
    return {"source": ev.card.source or "row", "sha256": ev.card.sha256()}


FALLBACK_MARK = "[fallback: no repository metadata; domain inferred from repository name and task/change content]"


class Backend(Protocol):
    name: str

    def stage1(self, evs: Sequence[Evidence]) -> list[Stage1]: ...

    def stage2(self, evs: Sequence[Evidence], s1: Sequence[Stage1]) -> list[Stage2]: ...


def make_backend(name: str, taxonomy: Taxonomy, **options: Any) -> Backend:
    """``offline``, ``heuristic`` or ``llm``.

    ``offline`` is the corpus-trained classifier (:class:`~swetrain.label.learned.LearnedBackend`,
    options: model, pool) unless ``heuristic=True`` or ``use_embeddings=False`` (then the rule-based
    :class:`~swetrain.label.offline.OfflineBackend`, options: use_embeddings); ``heuristic`` is the
    rule-based one; ``llm``: see :class:`LLMBackend`.
    """
    heuristic = bool(options.pop("heuristic", False)) or name == "heuristic"
    if name in ("offline", "heuristic") and (heuristic or options.get("use_embeddings") is False):
        from swetrain.label.offline import OfflineBackend

        options = {k: v for k, v in options.items() if k in ("use_embeddings", "embedder")}
        return OfflineBackend(taxonomy, **options)
    if name == "offline":
        from swetrain.label.learned import LearnedBackend

        options.pop("use_embeddings", None)
        return LearnedBackend(taxonomy, **options)
    if name == "llm":
        from swetrain.label.llm import LLMBackend

        return LLMBackend(taxonomy, **options)
    raise ValueError(f"unknown labeler backend {name!r}; expected 'offline', 'heuristic' or 'llm'")


class Labeler:
    """Annotate evidence records with validated :class:`Labels`."""

    def __init__(self, backend: str | Backend = "offline", taxonomy: Taxonomy | None = None, batch_size: int = 64,
                 pool_repositories: bool = True, **options: Any):
        self.taxonomy = taxonomy or default_taxonomy()
        self.pool_repositories = pool_repositories
        self.pool_threshold = 1.0
        self.pool_weight = 2.0
        self.abstain = float(options.pop("abstain", 0.0) or 0.0)
        self.backend: Backend = make_backend(backend, self.taxonomy, **options) if isinstance(backend, str) else backend
        self.card_counts: dict[str, int] = {"with_card": 0, "without_card": 0}  # of the last label_rows call
        self.batch_size = 10**9 if getattr(self.backend, "batch_all", False) else batch_size
        if getattr(self.backend, "batch_all", False) and hasattr(self.backend, "pool"):
            self.backend.pool = pool_repositories  # the backend pools inside its model

    def provenance(self) -> dict[str, Any]:
        """Backend and version, model / prompt hashes, taxonomy hash, time (one record per labels file)."""
        from swetrain.label.provenance import provenance

        rec = provenance(self.backend, self.taxonomy)
        if self.abstain:
            rec["abstain_threshold"] = self.abstain
        return rec

    def _assemble(self, ev: Evidence, s1: Stage1, s2: Stage2) -> Labels:
        d_rat = f"{s1.domain_rationale} | {s2.domain_rationale}"
        if not ev.has_metadata and FALLBACK_MARK not in d_rat:
            d_rat = f"{FALLBACK_MARK} {d_rat}"
        labels = Labels(
            task_type=AxisLabel(l1=s1.task_type_l1, l2=list(s2.task_type_l2),
                                rationale=f"{s1.task_type_rationale} | {s2.task_type_rationale} | scale: {s2.scale_rationale}"),
            domain=AxisLabel(l1=s1.domain_l1, l2=list(s2.domain_l2), rationale=d_rat),
            scope=s2.scope, complexity=s2.complexity, time=s2.time, code_language=s1.code_language,
            task_spec_type=s1.task_spec_type, dependency_context=s1.dependency_context,
        )
        return validate_labels(labels, self.taxonomy, where=f"labels of {ev.instance_id or ev.repo}")

    def _pool_repositories(self, evs: Sequence[Evidence], s1: list[Stage1]) -> None:
        """Repository profile: add the mean Domain L1 scores of all tasks of the same repository.

        Domain describes the repository's ecosystem, so evidence from every task of a repository in
        the input is pooled (score(x) + mean over the repository's tasks) before the L1 is chosen;
        a task-specific signal can still win for multi-purpose repositories. Only backends that
        expose per-L1 scores (offline) are pooled; repositories with one task are unchanged.
        """
        groups: dict[str, list[int]] = {}
        for i, (ev, st) in enumerate(zip(evs, s1)):
            if st.domain_scores and ev.repo:
                groups.setdefault(ev.repo, []).append(i)
        for idx in groups.values():
            if len(idx) < 2:
                continue
            names = list(s1[idx[0]].domain_scores or {})
            mean = {n: sum((s1[i].domain_scores or {}).get(n, 0.0) for i in idx) / len(idx) for n in names}
            for i in idx:
                own = s1[i].domain_scores or {}
                pooled = {n: own.get(n, 0.0) + self.pool_weight * mean[n] for n in names}
                best = max(pooled, key=lambda n: pooled[n])
                if best != s1[i].domain_l1 and (pooled[best] >= self.pool_threshold):
                    s1[i].domain_rationale = (f"repository profile over {len(idx)} tasks of {evs[i].repo}: {best} "
                                              f"(pooled score {pooled[best]:.2f}) overrides the task-level choice; {s1[i].domain_rationale}")
                    s1[i].domain_l1 = best
                else:
                    s1[i].domain_rationale = f"repository profile over {len(idx)} tasks agrees; {s1[i].domain_rationale}"

    def label_evidence(self, evs: Sequence[Evidence], progress: Callable[[int], None] | None = None) -> list[Labels]:
        """Label evidence: stage 1 for all records, repository pooling, then stage 2.

        ``progress(n)`` is called after each batch with the number of records finished in that step;
        each record counts once for stage 1 and once for stage 2 (total ``2 * len(evs)``).
        """
        return self._label(evs, progress)[0]

    def _label(self, evs: Sequence[Evidence], progress: Callable[[int], None] | None
               ) -> tuple[list[Labels], list[dict[str, float] | None]]:
        """Labels of ``evs`` and their confidences (one dict or None per record); no shared state."""
        evs = list(evs)
        s1: list[Stage1] = []
        for start in range(0, len(evs), self.batch_size):
            batch = evs[start : start + self.batch_size]
            s1 += self.backend.stage1(batch)
            if progress is not None:
                progress(len(batch))
        if self.pool_repositories:
            self._pool_repositories(evs, s1)
        out: list[Labels] = []
        confidence: list[dict[str, float] | None] = []
        for start in range(0, len(evs), self.batch_size):
            batch = evs[start : start + self.batch_size]
            s2 = self.backend.stage2(batch, s1[start : start + self.batch_size])
            out += [self._assemble(e, a, b) for e, a, b in zip(batch, s1[start : start + self.batch_size], s2)]
            for a, b in zip(s1[start : start + self.batch_size], s2):
                conf = {**(a.confidence or {}), **(b.confidence or {})}
                confidence.append(conf or None)
            if progress is not None:
                progress(len(batch))
        return out, confidence

    def label(self, evidence: Evidence) -> Labels:
        return self.label_evidence([evidence])[0]

    def label_rows(self, rows: Iterable[Mapping[str, Any]], progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
        """Issue–change rows -> the same rows with ``labels``, ``route``, ``label_confidence`` (when the
        backend gives confidences; the route is null when its confidence is under the abstain
        threshold) and ``label_provenance`` added."""
        rows = list(rows)
        evs = [from_issue_change(r) for r in rows]
        labels, confidence = self._label(evs, progress)
        prov = self.provenance()
        self.card_counts = {"with_card": sum(e.card is not None for e in evs), "without_card": sum(e.card is None for e in evs)}
        out = []
        for r, ev, lb, conf in zip(rows, evs, labels, confidence):
            row = {**r, "labels": lb.to_dict(), "route": route_of(lb.domain.l1)}
            if conf is not None:
                row["label_confidence"] = {k: round(v, 4) for k, v in conf.items()}
                low = sorted(k for k, v in conf.items() if v < self.abstain)
                if low:
                    row["label_abstained"] = low
                if "route" in low:
                    row["route"] = None
            row["label_provenance"] = {**prov, "repo_card": card_provenance(ev)}
            out.append(row)
        return out

    def label_trajectories(self, trajectories: Iterable[Any], progress: Callable[[int], None] | None = None) -> list[Labels]:
        return self.label_evidence([from_trajectory(t) for t in trajectories], progress)
