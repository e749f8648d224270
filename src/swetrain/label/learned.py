"""The learned offline backend: :class:`LearnedModel` predictions in the Labeler's two stages.

Stage 1 featurises the whole input at once (the Labeler hands it every row, so Domain can be pooled
over the rows of each repository inside the model) and takes the L1s, spec type and dependency
context from the classifiers; stage 2 takes L2s (hierarchical, see :mod:`swetrain.label.learn`)
and the scale levels. Code language comes from the changed files' extensions (rule-based). Each
stage carries a calibrated confidence per axis; rationales name the probability, the runner-up
and the decision-record signals that fired.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from swetrain.label.adapters import Evidence
from swetrain.label.encoder import encoder_inputs
from swetrain.label.features import FEATURE_VERSION, Featurizer
from swetrain.label.learn import DEFAULT_MODEL_PATH, MODEL_VERSION, LearnedModel, ModelError
from swetrain.label.offline import Stage1, Stage2
from swetrain.label.taxonomy import UNSPECIFIED, Taxonomy

# Axes taken from the diff-structure rules instead of the classifier: in grouped CV on the corpus
# the rules scored higher with feat-v1 (scope 84.0% vs 81.4%, time 59.8% vs 55.0%) and are within
# noise of the feat-v2 classifier (83.1%, 60.7%; docs/labels.md).
RULE_AXES: tuple[str, ...] = ("scope", "time")


def _why(pred: dict[str, Any], axis: str, hits: dict[str, list[str]] | None = None) -> str:
    value, p = pred[axis], pred["confidence"].get(axis, 0.0)
    text = f"{value} (p={p:.2f}"
    if axis in pred["runner_up"]:
        r, q = pred["runner_up"][axis]
        text += f"; runner-up {r} {q:.2f}"
    text += ")"
    fired = (hits or {}).get(value)
    if fired:
        text += "; signals " + ", ".join(repr(h) for h in fired[:3])
    return text


class LearnedBackend:
    """``offline`` labeling with the corpus-trained classifiers (embeddings + signals + metadata)."""

    name = "offline"
    version = MODEL_VERSION
    batch_all = True  # the Labeler passes the whole input in one batch (repository pooling inside)

    def __init__(self, taxonomy: Taxonomy, model: LearnedModel | str | Path | None = None, pool: bool = True,
                 embedder=None, featurizer: Featurizer | None = None, cache_dir: str | Path | None = None):
        self.taxonomy = taxonomy
        self.model_path = None if isinstance(model, LearnedModel) else Path(model) if model is not None else DEFAULT_MODEL_PATH
        self.model = model if isinstance(model, LearnedModel) else LearnedModel.load(self.model_path)
        if featurizer is None and embedder is None:
            from swetrain.label.embed import find_model_dir

            find_model_dir()  # fail now, with the install hint, rather than in the middle of labeling
        self.featurizer = featurizer or Featurizer(taxonomy, embedder=embedder, cache_dir=cache_dir)
        if self.model.feature_names != self.featurizer.names:
            raise ModelError(f"{self.model_path or 'model'}: its features differ from this version's ({FEATURE_VERSION}); "
                             "retrain it with `swetrain label train`")
        self._check_classes()
        self.pool = pool
        self._pending: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def _check_classes(self) -> None:
        tx = self.taxonomy
        for axis in ("task_type", "domain"):
            fams = tx.families(axis)
            bad = [c for c in self.model.axes[f"{axis}.l1"].classes if c not in fams]
            bad += [c for c in self.model.axes[f"{axis}.l2"].classes
                    if c.split(".", 1)[0] not in fams or (c.split(".", 1)[1] != UNSPECIFIED and c.split(".", 1)[1] not in fams[c.split(".", 1)[0]].child_names)]
            if bad:
                raise ModelError(f"{self.model_path or 'model'}: {axis} classes {bad[:3]} are not in this taxonomy; retrain the model")

    def provenance(self) -> dict[str, Any]:
        enc = self.model.task_encoder
        return {"model": str(self.model_path) if self.model_path else "in-memory", "model_digest": self.model.digest(),
                "model_meta": self.model.meta, "features": FEATURE_VERSION, "repository_pooling": self.pool,
                "task_encoder": None if enc is None else {"digest": enc.digest(), "mix": enc.config.mix, "rows": enc.meta.get("rows")}}

    def stage1(self, evs: Sequence[Evidence]) -> list[Stage1]:
        x, heur = self.featurizer.transform(evs)
        enc = self.model.task_encoder
        p_enc = enc.proba([encoder_inputs(e, enc.config) for e in evs]) if enc is not None and len(evs) else None
        preds = self.model.predict(x, [e.repo for e in evs], pool=self.pool, task_type_proba=p_enc) if len(evs) else []
        digest = self.model.digest()
        out = []
        for ev, pred, h in zip(evs, preds, heur):
            self._pending[ev.digest()] = (pred, h)
            conf = {k: v for k, v in pred["confidence"].items() if k in ("task_type.l1", "domain.l1", "route", "task_spec_type", "dependency_context")}
            out.append(Stage1(
                task_type_l1=pred["task_type.l1"], domain_l1=pred["domain.l1"], code_language=h["code_language"],
                task_spec_type=pred["task_spec_type"], dependency_context=pred["dependency_context"],
                task_type_rationale=f"stage 1 (learned {digest}{' + fine-tuned encoder' if enc is not None else ''}): {_why(pred, 'task_type.l1', h['hits']['task_type'])}; language from changed files/repository",
                domain_rationale=(f"stage 1 (learned{', repository-pooled' if self.pool else ''}; "
                                  + (f"from the repository card {ev.card.sha256()}" if ev.card is not None and self.model.card is not None
                                     else "no repository card: from name, statement and change") + f"): {_why(pred, 'domain.l1', h['hits']['domain'])}"),
                confidence=conf,
            ))
        return out

    def _fallback_l2(self, ev: Evidence, axis: str, l1: str) -> tuple[list[str], str]:
        fam = self.taxonomy.family(axis, l1)
        if not fam.children:
            return [UNSPECIFIED], f"{l1} has no L2 children -> unspecified"
        vec = self.featurizer.offline._embed([ev])
        kept = self.featurizer.offline._pick_children(self.featurizer.offline._score_children(ev, axis, fam, None if vec is None else vec[0]))
        if not kept:
            return [UNSPECIFIED], f"no trained or signalled child of {l1} -> unspecified"
        return [k.name for k in kept], "rule-based pick (no child of " + l1 + " in the training corpus): " + ", ".join(k.name for k in kept)

    def stage2(self, evs: Sequence[Evidence], s1: Sequence[Stage1]) -> list[Stage2]:
        out = []
        for ev, st in zip(evs, s1):
            pred, h = self._pending.pop(ev.digest(), (None, None))
            if pred is None:  # stage 2 without our stage 1 (should not happen): compute it now
                self.stage1([ev])
                pred, h = self._pending.pop(ev.digest())
            res: dict[str, tuple[list[str], str]] = {}
            conf: dict[str, float] = {}
            for axis, l1 in (("task_type", st.task_type_l1), ("domain", st.domain_l1)):
                l2 = pred.get(f"{axis}.l2")
                if l2 is None or l1 != pred[f"{axis}.l1"]:
                    res[axis] = self._fallback_l2(ev, axis, l1)
                else:
                    res[axis] = (list(l2), f"{', '.join(l2)} (p={pred['confidence'][f'{axis}.l2']:.2f})")
                    conf[f"{axis}.l2"] = pred["confidence"][f"{axis}.l2"]
            scale: dict[str, str] = {}
            why: list[str] = []
            for ax in ("scope", "complexity", "time"):
                if ax in RULE_AXES:
                    scale[ax] = h[ax]
                    why.append(f"{ax} {h[ax]} (diff-structure rule)")
                else:
                    scale[ax] = pred[ax]
                    conf[ax] = pred["confidence"][ax]
                    why.append(f"{ax} {_why(pred, ax)}")
            out.append(Stage2(
                task_type_l2=res["task_type"][0], domain_l2=res["domain"][0], scope=scale["scope"], complexity=scale["complexity"],
                time=scale["time"], task_type_rationale=f"stage 2: {res['task_type'][1]}", domain_rationale=f"stage 2: {res['domain'][1]}",
                scale_rationale=", ".join(why), confidence=conf,
            ))
        return out
