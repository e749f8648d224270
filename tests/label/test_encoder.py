"""The fine-tuned Task Type encoder (issue 33): training on the real MiniLM, persistence beside the
model file, mixing into the linear model's Task Type L1, the supplement's loader and its fold rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from swetrain.label.corpus import SUPPLEMENT_PATH, CorpusError, load_supplement
from swetrain.label.crossval import cross_validate, fold_supplement, train_model
from swetrain.label.encoder import EncoderConfig, EncoderError, TaskTypeEncoder, TaskTypeEnsemble, load_task_encoder, train_task_encoder
from swetrain.label.learn import LearnedModel, ModelError, encoder_folder, mix_task_type

from test_learn import StubFeaturizer, _rows

# a few steps on short inputs: enough for MiniLM to separate two obvious classes
TINY = EncoderConfig(max_length=32, epochs=4, batch_size=4, lr=1e-4, head_lr=1e-2)
PAIRS = [("Loading a big file takes ten minutes, very slow", "+ index = {k: v for k, v in rows}"),
         ("KeyError crash when the config file has no section", "+ if key not in cfg: return None"),
         ("Performance: the loop is quadratic and slow on large input", "+ seen = set()"),
         ("TypeError raised when the input is None", "+ if value is None: raise ValueError")] * 3
LABELS = ["performance-fix", "bug-fix", "performance-fix", "bug-fix"] * 3


@pytest.fixture(scope="module")
def tiny_encoder(embedder):  # the embedder fixture skips, with the install hint, where MiniLM is missing
    return TaskTypeEncoder.train(PAIRS, LABELS, TINY)


def test_mix_task_type_aligns_classes_and_renormalises() -> None:
    p_lin = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    p_enc = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])  # encoder classes: unknown-to-linear, bug-fix, feature
    out = mix_task_type(p_lin, ["bug-fix", "feature", "refactor"], p_enc, ["config", "bug-fix", "feature"], 0.5)
    assert np.allclose(out[0], 0.5 * p_lin[0] + 0.5 * np.array([0.5, 0.5, 0.0]))
    # all the encoder's mass sits on a class the linear model lacks: it contributes nothing
    assert np.allclose(out[1], 0.5 * p_lin[1])
    assert np.allclose(mix_task_type(p_lin, ["a", "b", "c"], p_enc, ["x", "y", "z"], 0.0), p_lin)
    with pytest.raises(ValueError, match=r"mix weight must be in \[0, 1\]"):
        mix_task_type(p_lin, ["a"], p_enc, ["a"], 1.5)


def test_encoder_learns_round_trips_and_is_seeded(tiny_encoder, tmp_path) -> None:
    p = tiny_encoder.proba(PAIRS[:4])
    assert tiny_encoder.classes == ["bug-fix", "performance-fix"]
    assert [tiny_encoder.classes[i] for i in p.argmax(axis=1)] == LABELS[:4]
    assert np.allclose(p.sum(axis=1), 1.0)
    tiny_encoder.save(tmp_path / "enc")
    again = TaskTypeEncoder.load(tmp_path / "enc")
    assert again.digest() == tiny_encoder.digest() and again.config == TINY
    assert np.allclose(again.proba(PAIRS[:4]), p, atol=1e-5)
    assert TaskTypeEncoder.train(PAIRS, LABELS, TINY).digest() == tiny_encoder.digest()  # same seed, same weights


def test_ensemble_averages_seeded_members_and_round_trips(taxonomy, tiny_encoder, tmp_path) -> None:
    seen: list[tuple[int, int]] = []
    ens = train_task_encoder(PAIRS, LABELS, EncoderConfig(**{**TINY.__dict__, "members": 2}), progress=lambda s, t: seen.append((s, t)))
    assert isinstance(ens, TaskTypeEnsemble) and ens.config.members == 2 and ens.classes == tiny_encoder.classes
    # member i is the single encoder of seed + i: member 0 is exactly the fixture's encoder
    assert ens.members[0].digest() == tiny_encoder.digest() != ens.members[1].digest()
    assert np.allclose(ens.proba(PAIRS[:4]), (ens.members[0].proba(PAIRS[:4]) + ens.members[1].proba(PAIRS[:4])) / 2)
    total = seen[-1][1]
    assert [s for s, _ in seen] == list(range(1, total + 1)) and all(t == total for _, t in seen)  # one count over both members
    ens.save(tmp_path / "ens")
    again = load_task_encoder(tmp_path / "ens")
    assert isinstance(again, TaskTypeEnsemble) and again.digest() == ens.digest() and again.config == ens.config
    assert np.allclose(again.proba(PAIRS[:4]), ens.proba(PAIRS[:4]), atol=1e-5)
    assert isinstance(load_task_encoder(tmp_path / "ens" / "member_1"), TaskTypeEncoder)
    model = train_model(_rows(), StubFeaturizer(taxonomy), seed=0)
    model.task_encoder = ens
    model.save(tmp_path / "m.npz")
    assert LearnedModel.load(tmp_path / "m.npz").task_encoder.digest() == ens.digest()
    # a member swapped on disk is refused
    tiny_encoder.save(tmp_path / "ens" / "member_1")
    with pytest.raises(EncoderError, match="digest differs"):
        load_task_encoder(tmp_path / "ens")
    with pytest.raises(EncoderError, match="members must be at least 1"):
        train_task_encoder(PAIRS, LABELS, EncoderConfig(**{**TINY.__dict__, "members": 0}))


def test_model_with_encoder_saves_beside_itself_and_mixes(taxonomy, tiny_encoder, tmp_path) -> None:
    rows = _rows()
    feat = StubFeaturizer(taxonomy)
    model = train_model(rows, feat, seed=0)
    model.task_encoder = tiny_encoder
    path = tmp_path / "m.npz"
    model.save(path)
    assert (tmp_path / "m.task_encoder" / "head.npz").exists() and encoder_folder(path) == tmp_path / "m.task_encoder"
    loaded = LearnedModel.load(path)
    assert loaded.digest() == model.digest() and loaded.task_encoder.digest() == tiny_encoder.digest()
    from swetrain.label.adapters import from_issue_change

    x, _ = feat.transform([from_issue_change(r) for r in rows])
    # an encoder certain of performance-fix moves every row's Task Type L1 there
    certain = np.tile([0.0, 1.0], (len(rows), 1))
    preds = loaded.predict(x, [r["repo"] for r in rows], task_type_proba=certain)
    plain = loaded.predict(x, [r["repo"] for r in rows])
    assert sum(p["task_type.l1"] == "performance-fix" for p in preds) > sum(p["task_type.l1"] == "performance-fix" for p in plain)
    with pytest.raises(ModelError, match="without a Task Type encoder"):
        train_model(rows, feat, seed=0).predict(x, task_type_proba=certain)
    # a swapped encoder folder is refused, a missing one named
    TaskTypeEncoder.train(PAIRS, LABELS, EncoderConfig(**{**TINY.__dict__, "seed": 1})).save(tmp_path / "m.task_encoder")
    with pytest.raises(ModelError, match="digest differs"):
        LearnedModel.load(path)
    import shutil

    shutil.rmtree(tmp_path / "m.task_encoder")
    with pytest.raises(ModelError, match="not a Task Type encoder folder"):
        LearnedModel.load(path)


def test_fold_supplement_drops_the_test_folds_repositories() -> None:
    sup = [{"repo": "Org/A"}, {"repo": "org/b"}, {"repo": "new/c"}]
    assert fold_supplement(sup, [{"repo": "org/a"}, {"repo": "ORG/B "}]) == [{"repo": "new/c"}]


def test_cross_validation_trains_each_fold_encoder_without_its_test_repositories(taxonomy, embedder) -> None:
    rows = _rows(24)
    for r in rows:
        r["patch"] = "+ x = 1"
    # supplement rows: two of the corpus's repositories and one new one
    sup = [{"instance_id": f"s{i}", "repo": repo, "problem_statement": f"issue s{i} kind feature", "patch": "+ y",
            "labels": {"task_type": {"l1": "feature", "l2": ["unspecified"]}}} for i, repo in enumerate(["org/repo1", "ORG/repo2", "else/where"])]
    cache: dict = {}
    tiny = EncoderConfig(max_length=16, epochs=1, batch_size=8)
    preds, folds = cross_validate(rows, k=3, seed=0, taxonomy=taxonomy, featurizer=StubFeaturizer(taxonomy), encoder=tiny,
                                  supplement=sup, encoder_cache=cache)
    assert len(preds) == len(rows) and len(cache) == 3
    for test in folds:
        held = {rows[i]["repo"].strip().lower() for i in test}
        expected = sum(1 for s in sup if s["repo"].strip().lower() not in held)
        train_ids = tuple(r["instance_id"] for i, r in enumerate(rows) if i not in set(int(j) for j in test))
        assert (train_ids, expected, tiny) in cache
    assert all("fine-tuned encoder" in p["labels"]["task_type"]["rationale"] for p in preds)


def test_packaged_supplement_is_valid_and_outside_the_corpus(taxonomy) -> None:
    from swetrain.label.corpus import CORPUS_PATH

    corpus = {json.loads(line)["instance_id"] for line in CORPUS_PATH.read_text().splitlines()}
    rows = [json.loads(line) for line in SUPPLEMENT_PATH.read_text().splitlines()]
    assert len(rows) >= 500 and not corpus & {r["instance_id"] for r in rows}
    assert all(r["origin"] == "label_pool" and set(r["labels"]) == {"task_type"} for r in rows)


def test_supplement_loader_joins_texts_and_names_a_bad_row(tmp_path, taxonomy) -> None:
    data = tmp_path / "shared"
    data.mkdir()
    (data / "label_pool.jsonl").write_text(json.dumps({"instance_id": "o__r-1", "repo": "o/r", "problem_statement": "slow", "patch": "+ a"}) + "\n")
    (data / "swebench_verified.jsonl").write_text("")
    good = {"instance_id": "o__r-1", "repo": "o/r", "origin": "label_pool", "labels": {"task_type": {"l1": "performance-fix", "l2": ["caching"]}}}
    path = tmp_path / "sup.jsonl"
    path.write_text(json.dumps(good) + "\n")
    rows = load_supplement(path, data, taxonomy)
    assert rows[0]["problem_statement"] == "slow" and rows[0]["labels"] == {"task_type": good["labels"]["task_type"]}
    bad = {**good, "instance_id": "o__r-2", "labels": {"task_type": {"l1": "performance-fix", "l2": ["null_reference"]}}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(CorpusError, match=r"sup.jsonl: row 2 \(o__r-2\): task_type.l2 'null_reference' is not a child of 'performance-fix'"):
        load_supplement(path, data, taxonomy)
    path.write_text(json.dumps({**good, "labels": {}}) + "\n")
    with pytest.raises(CorpusError, match="labels.task_type is missing"):
        load_supplement(path, data, taxonomy)


def test_cli_encoder_options_need_task_encoder(tmp_path) -> None:
    from swetrain.cli import app

    res = CliRunner().invoke(app, ["label", "train", "--out", str(tmp_path / "m.npz"), "--no-supplement"])
    assert res.exit_code == 2 and "need --task-encoder" in res.output
    assert not (tmp_path / "m.npz").exists()
    res = CliRunner().invoke(app, ["label", "eval", "--cv", "--encoder-members", "2"])
    assert res.exit_code == 2 and "need --task-encoder" in res.output
    res = CliRunner().invoke(app, ["label", "train", "--out", str(tmp_path / "m.npz"), "--task-encoder", "--encoder-members", "0"])
    assert res.exit_code == 2 and "--encoder-members must be at least 1, got 0" in res.output
    assert not (tmp_path / "m.npz").exists()
