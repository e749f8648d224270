"""The learned labeler: grouped splitting, determinism from a seed, hierarchy, persistence, CV path.

A stub featuriser (hashed pseudo-random vectors plus a label-revealing column) keeps these fast;
the real embedding features are exercised by the CLI test and `swetrain label eval --cv`.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swetrain.label.crossval import cross_validate
from swetrain.label.features import Featurizer
from swetrain.label.learn import LearnedModel, ModelError, grouped_folds
from swetrain.label.learned import LearnedBackend
from swetrain.label.schema import check_labels

TT = ["bug-fix", "feature", "performance-fix"]
DM = ["data_science", "web_backend", "devtools_test"]


def _labels(i: int) -> dict:
    tt, dm = TT[i % 3], DM[(i // 3) % 3]
    return {"task_type": {"l1": tt, "l2": ["unspecified"], "rationale": ""}, "domain": {"l1": dm, "l2": ["unspecified"], "rationale": ""},
            "scope": ["single_file", "cross_module"][i % 2], "complexity": "local_reasoning", "time": "small_1h", "code_language": "python",
            "task_spec_type": "specific", "dependency_context": "codebase"}


def _rows(n: int = 36) -> list[dict]:
    return [{"instance_id": f"r{i}", "repo": f"org/Repo{i // 3}" if i % 2 else f"ORG/repo{i // 3}",
             "problem_statement": f"issue {i} kind {TT[i % 3]} in {DM[(i // 3) % 3]}", "labels": _labels(i)} for i in range(n)]


class StubFeaturizer(Featurizer):
    """Hashed pseudo-random features plus one-hot informative columns read from the statement."""

    def __init__(self, taxonomy):
        super().__init__(taxonomy)
        self.offline.use_embeddings = False
        self.names = [f"f{i}" for i in range(18)]

    def _transform(self, evs):
        rows = []
        for ev in evs:
            seed = int(hashlib.sha256(ev.statement.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).normal(size=18)
            v[:6] = 0.0
            v[next(i for i, t in enumerate(TT) if t in ev.statement)] = 4.0
            v[3 + next(i for i, d in enumerate(DM) if d in ev.statement)] = 4.0
            rows.append(v)
        return np.asarray(rows, dtype=np.float32), [{"code_language": "python", "scope": "single_file", "time": "small_1h", "hits": {"task_type": {}, "domain": {}}} for _ in evs]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a/x", "A/X", "b/y", "c/z", "d/w", "e/v", "B/y "]), min_size=1, max_size=40), st.integers(1, 6), st.integers(0, 5))
def test_grouped_folds_never_split_a_repository(repos, k, seed) -> None:
    folds = grouped_folds(repos, k, seed)
    assert sorted(int(i) for f in folds for i in f) == list(range(len(repos)))
    where = {}
    for fi, f in enumerate(folds):
        for i in f:
            key = repos[i].strip().lower()
            assert where.setdefault(key, fi) == fi, f"{repos[i]} is in folds {where[key]} and {fi}"


def test_classifier_is_deterministic_from_a_seed_and_round_trips(taxonomy, tmp_path) -> None:
    rows = _rows()
    feat = StubFeaturizer(taxonomy)
    from swetrain.label.crossval import train_model

    m1 = train_model(rows, feat, seed=3)
    m2 = train_model(rows, StubFeaturizer(taxonomy), seed=3)
    assert m1.digest() == m2.digest()
    for ax in m1.axes:
        assert m1.axes[ax].temperature == m2.axes[ax].temperature
    x, _ = feat.transform([__import__("swetrain.label.adapters", fromlist=["x"]).from_issue_change(r) for r in rows])
    p1 = m1.predict(x, [r["repo"] for r in rows])
    assert p1 == m2.predict(x, [r["repo"] for r in rows])
    m1.save(tmp_path / "m.npz")
    m3 = LearnedModel.load(tmp_path / "m.npz")
    assert m3.digest() == m1.digest()
    p3 = m3.predict(x, [r["repo"] for r in rows])
    assert [p["task_type.l1"] for p in p3] == [p["task_type.l1"] for p in p1]
    assert np.allclose([p["confidence"]["domain.l1"] for p in p3], [p["confidence"]["domain.l1"] for p in p1], atol=1e-4)
    with pytest.raises(ModelError, match="not found"):
        LearnedModel.load(tmp_path / "none.npz")


def test_cross_validation_is_grouped_hierarchical_and_valid(taxonomy) -> None:
    rows = _rows()
    preds, folds = cross_validate(rows, k=4, seed=0, taxonomy=taxonomy, featurizer=StubFeaturizer(taxonomy))
    assert [p["instance_id"] for p in preds] == [r["instance_id"] for r in rows]
    fold_of = {}
    for p, r in zip(preds, rows):
        assert fold_of.setdefault(r["repo"].lower(), p["cv_fold"]) == p["cv_fold"]  # one repository, one fold
        assert check_labels(p["labels"], taxonomy) == []
        fam = taxonomy.family("task_type", p["labels"]["task_type"]["l1"])
        assert all(x == "unspecified" or x in fam.child_names for x in p["labels"]["task_type"]["l2"])
        assert 0.0 <= p["label_confidence"]["route"] <= 1.0 + 1e-9
        assert p["label_provenance"]["backend"] == "offline" and p["label_provenance"]["taxonomy_sha256"]
    # the informative columns are learnable: well above chance (1/3) on unseen repositories
    acc = np.mean([p["labels"]["task_type"]["l1"] == r["labels"]["task_type"]["l1"] for p, r in zip(preds, rows)])
    assert acc > 0.8


def test_abstain_threshold_sets_route_unassigned(taxonomy) -> None:
    from swetrain.label.crossval import train_model
    from swetrain.label.labeler import Labeler

    rows = _rows()
    feat = StubFeaturizer(taxonomy)
    model = train_model(rows, feat, seed=0)
    strict = Labeler(LearnedBackend(taxonomy, model=model, featurizer=feat), taxonomy=taxonomy, abstain=1.01).label_rows(rows[:4])
    assert all(r["route"] is None and "route" in r["label_abstained"] for r in strict)
    assert strict[0]["label_provenance"]["abstain_threshold"] == 1.01
    loose = Labeler(LearnedBackend(taxonomy, model=model, featurizer=feat), taxonomy=taxonomy).label_rows(rows[:4])
    assert all(r["route"] in ("A", "B", "C") and "label_abstained" not in r for r in loose)


def test_model_for_another_feature_set_is_refused(taxonomy) -> None:
    model = LearnedModel(["a", "b"], np.zeros(2), np.ones(2), {}, {})
    with pytest.raises(ModelError, match="features differ"):
        LearnedBackend(taxonomy, model=model)
