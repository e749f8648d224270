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


def _fixed_model(domain_probs: dict[str, float]) -> LearnedModel:
    """A model whose Domain L1 probabilities are ``domain_probs`` for every input (other axes: one class)."""
    from swetrain.label.learn import TRAIN_AXES, AxisModel

    one = {"task_type.l1": "bug-fix", "task_type.l2": "bug-fix.unspecified", "domain.l2": "data_science.unspecified",
           "scope": "single_file", "complexity": "local_reasoning", "time": "small_1h", "task_spec_type": "specific",
           "dependency_context": "codebase"}
    axes = {ax: AxisModel([one[ax]], np.zeros((2, 1)), np.zeros(1)) for ax in TRAIN_AXES if ax != "domain.l1"}
    classes = sorted(domain_probs)
    axes["domain.l1"] = AxisModel(classes, np.zeros((2, len(classes))), np.log([domain_probs[k] for k in classes]))
    return LearnedModel(["a", "b"], np.zeros(2), np.ones(2), axes, {})


def test_route_is_the_route_with_most_domain_mass_and_domain_follows_it() -> None:
    from swetrain.label.routing import route_of

    # data_science alone is the most probable L1, but the user-facing (B) L1s hold more mass together
    model = _fixed_model({"data_science": 0.40, "media_graphics": 0.25, "desktop_gui": 0.20, "devtools_test": 0.15})
    (pred,) = model.predict(np.zeros((1, 2)))
    assert pred["route"] == "B" and pred["confidence"]["route"] == pytest.approx(0.45)
    assert pred["domain.l1"] == "media_graphics" and route_of(pred["domain.l1"]) == "B"
    assert pred["confidence"]["domain.l1"] == pytest.approx(0.25)
    assert pred["runner_up"]["domain.l1"] == ("data_science", pytest.approx(0.40))
    # when the top L1's route also holds the most mass, nothing changes
    model = _fixed_model({"data_science": 0.40, "web_backend": 0.25, "desktop_gui": 0.20, "devtools_test": 0.15})
    (pred,) = model.predict(np.zeros((1, 2)))
    assert (pred["route"], pred["domain.l1"]) == ("A", "data_science") and pred["confidence"]["route"] == pytest.approx(0.65)
    # unassigned L1s (docs_knowledge, other, non_coding) form their own group
    model = _fixed_model({"other": 0.3, "docs_knowledge": 0.3, "web_backend": 0.4})
    (pred,) = model.predict(np.zeros((1, 2)))
    assert pred["route"] is None and pred["domain.l1"] in ("other", "docs_knowledge")


def test_balanced_class_weights_recover_a_rare_class() -> None:
    """The class-weight lever (measured in docs/labels.md): a rare class with weak evidence is found only when balanced."""
    from swetrain.label.learn import _fit_linear

    rng = np.random.default_rng(0)
    y = ["data_science"] * 190 + ["media_graphics"] * 10
    x = rng.normal(size=(200, 5))
    x[190:, 0] += 1.5  # weak evidence for the rare class
    rare = x[190:]
    plain = _fit_linear(x, y, 0.01, 0)
    balanced = _fit_linear(x, y, 0.01, 0, "balanced")
    col = plain.classes.index("media_graphics")
    assert (plain.proba(rare).argmax(axis=1) == col).sum() == 0
    assert (balanced.proba(rare).argmax(axis=1) == col).sum() >= 7


class BlockFeaturizer(StubFeaturizer):
    """The stub's columns named like the real embedding blocks: 0-5 shared, 6-11 title, 12-17 statement."""

    def __init__(self, taxonomy):
        super().__init__(taxonomy)
        self.names = [f"f{i}" for i in range(6)] + [f"emb_title.{i}" for i in range(6)] + [f"emb_statement.{i}" for i in range(6)]


def test_each_axis_reads_only_its_embedding_blocks(taxonomy, tmp_path) -> None:
    from swetrain.label.adapters import from_issue_change
    from swetrain.label.crossval import train_model
    from swetrain.label.learn import axis_columns

    feat = BlockFeaturizer(taxonomy)
    assert list(axis_columns(feat.names, "domain.l1")) == [*range(6), *range(12, 18)]
    assert list(axis_columns(feat.names, "task_type.l1")) == list(range(12))
    rows = _rows()
    model = train_model(rows, feat, seed=0)
    assert model.axes["domain.l1"].coef.shape[0] == 12 and model.axes["complexity"].coef.shape[0] == 12
    x, _ = feat.transform([from_issue_change(r) for r in rows])
    base = model.probabilities(x)
    title_noise, stmt_noise = x.copy(), x.copy()
    title_noise[:, 6:12] += 5.0
    stmt_noise[:, 12:18] += 5.0
    assert np.allclose(model.probabilities(title_noise)["domain.l1"], base["domain.l1"])  # Domain ignores the title block
    assert not np.allclose(model.probabilities(stmt_noise)["domain.l1"], base["domain.l1"])
    assert np.allclose(model.probabilities(stmt_noise)["task_type.l1"], base["task_type.l1"])  # Task Type ignores the statement block
    model.save(tmp_path / "m.npz")
    again = LearnedModel.load(tmp_path / "m.npz")
    assert list(again.axes["domain.l1"].columns) == list(model.axes["domain.l1"].columns)
    assert again.digest() == model.digest()
    assert np.allclose(again.probabilities(x)["domain.l1"], base["domain.l1"], atol=1e-5)


def test_cross_validation_pools_only_within_the_held_out_fold(taxonomy, monkeypatch) -> None:
    """Each fold's model is trained without the fold's repositories and pools Domain over that fold's rows only."""
    import swetrain.label.crossval as cv

    rows = _rows()
    calls: list[tuple[set[str], set[str]]] = []
    trained: list[set[str]] = []
    real_fit, real_predict = LearnedModel.fit.__func__, LearnedModel.predict

    def fit(cls, x, labels, repos, *a, **kw):
        trained.append({r.lower() for r in repos})
        return real_fit(cls, x, labels, repos, *a, **kw)

    def predict(self, x, repos=None, pool=True, task_type_proba=None):
        calls.append(({r.lower() for r in repos}, trained[-1]))
        return real_predict(self, x, repos, pool, task_type_proba)

    monkeypatch.setattr(LearnedModel, "fit", classmethod(fit))
    monkeypatch.setattr(LearnedModel, "predict", predict)
    preds, folds = cv.cross_validate(rows, k=4, seed=1, taxonomy=taxonomy, featurizer=StubFeaturizer(taxonomy))
    assert len(calls) == len(folds) == 4
    for (seen, train), test in zip(calls, folds):
        assert seen == {rows[i]["repo"].lower() for i in test}  # pooled over the fold's own rows, nothing else
        assert not seen & train  # never a training repository
    assert len(preds) == len(rows)


def test_feature_texts_title_and_issue() -> None:
    from swetrain.label.adapters import from_issue_change
    from swetrain.label.features import ISSUE_CHARS, issue_text, title_text

    ev = from_issue_change({"instance_id": "x", "repo": "pandas-dev/pandas", "problem_statement": "\n  BUG: read_csv drops the index\nbody " + "y" * 3000})
    assert title_text(ev) == "BUG: read_csv drops the index"  # first non-blank line
    ev = from_issue_change({"instance_id": "x", "repo": "pandas-dev/pandas", "problem_statement": "BUG: read_csv drops the index\nbody " + "y" * 3000})
    text = issue_text(ev)
    assert text.startswith("pandas. BUG: read_csv") and len(text) == len("pandas. ") + ISSUE_CHARS
    meta = from_issue_change({"instance_id": "x", "repo": "a/b", "problem_statement": "s", "repo_description": "A web framework"})
    assert issue_text(meta) == "b. A web framework. s"
