"""The development corpus: building from pass files, agreement, joining texts, bad rows -> one error."""

from __future__ import annotations

import copy
import json

import pytest
from label_testdata import write_jsonl
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.corpus import CORPUS_PATH, CorpusError, build_corpus, load_corpus, read_corpus
from swetrain.label.metrics import agreement_table, cohen_kappa

LAB = {"task_type": {"l1": "bug-fix", "l2": ["off_by_one"], "rationale": ""},
       "domain": {"l1": "data_science", "l2": ["scientific_numerical"], "rationale": ""},
       "scope": "single_file", "complexity": "local_reasoning", "time": "small_1h", "code_language": "python",
       "task_spec_type": "specific", "dependency_context": "codebase"}


def _lab(**changes):
    out = copy.deepcopy(LAB)
    for key, value in changes.items():
        if "." in key:
            a, b = key.split(".")
            out[a][b] = value
        else:
            out[key] = value
    return out


def _setup(tmp_path):
    inputs = write_jsonl(tmp_path / "inputs.jsonl", [
        {"instance_id": f"o__r-{i}", "repo": f"o/r{i % 2}", "language": "Python", "source": "s", "origin": "label_pool"} for i in range(3)])
    a = write_jsonl(tmp_path / "a.jsonl", [{"instance_id": f"o__r-{i}", "labels": LAB, "rationale": "why a"} for i in range(3)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"instance_id": "o__r-0", "labels": LAB, "rationale": "why b"},
                                           {"instance_id": "o__r-1", "labels": _lab(**{"task_type.l1": "feature", "task_type.l2": ["unspecified"]}), "rationale": "b"},
                                           {"instance_id": "o__r-2", "labels": _lab(scope="cross_module"), "rationale": "b"}])
    adj = write_jsonl(tmp_path / "adj.jsonl", [{"instance_id": "o__r-1", "labels": _lab(**{"task_type.l1": "feature", "task_type.l2": ["unspecified"]}),
                                                "rationale": "adjudicated: a new option", "adjudicated": ["task_type.l1"]}])
    data = tmp_path / "shared"
    data.mkdir()
    write_jsonl(data / "label_pool.jsonl", [{"instance_id": f"o__r-{i}", "repo": f"o/r{i % 2}", "problem_statement": f"text {i}", "patch": ""} for i in range(3)])
    write_jsonl(data / "swebench_verified.jsonl", [])
    return inputs, a, b, adj, data


def test_build_corpus_final_labels_agreement_and_join(tmp_path, taxonomy) -> None:
    inputs, a, b, adj, data = _setup(tmp_path)
    out = tmp_path / "corpus.jsonl"
    summary = build_corpus(inputs, [a], [b], adj, out, tmp_path / "agreement.json", taxonomy)
    assert summary["rows"] == 3 and summary["repos"] == 2
    assert summary["gold_from"] == {"adjudicated": 1, "agreed": 1, "pass_a": 1}
    assert summary["agreement"]["task_type.l1"]["agreement"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["agreement"]["domain.l1"]["agreement"] == 1.0
    rows = read_corpus(out, taxonomy)
    assert rows[1].labels["task_type"]["l1"] == "feature" and rows[1].adjudicated_axes == ["task_type.l1"]
    assert "problem_statement" not in json.loads(out.read_text().splitlines()[0])  # no texts in the repository
    joined = load_corpus(out, data, taxonomy)
    assert [r["problem_statement"] for r in joined] == ["text 0", "text 1", "text 2"]
    assert json.loads((tmp_path / "agreement.json").read_text())["rows"] == 3


def test_kappa_and_agreement_table() -> None:
    assert cohen_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == 1.0
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # chance agreement 1: undefined
    assert cohen_kappa(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0
    table = agreement_table([(LAB, LAB), (LAB, _lab(**{"domain.l1": "web_backend", "domain.l2": ["unspecified"]}))])
    assert table["route"]["agreement"] == 1.0 and table["domain.l1"]["agreement"] == 0.5


def test_corpus_row_with_unknown_label_is_one_clear_error(tmp_path, taxonomy) -> None:
    inputs, a, b, adj, data = _setup(tmp_path)
    out = tmp_path / "corpus.jsonl"
    build_corpus(inputs, [a], [b], adj, out, None, taxonomy)
    lines = out.read_text().splitlines()
    row = json.loads(lines[2])
    row["labels"]["domain"]["l1"] = "rocket_science"
    lines[2] = json.dumps(row)
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusError, match=r"row 3 \(o__r-2\): labels do not fit the taxonomy: domain.l1 'rocket_science' is not a declared L1"):
        read_corpus(out, taxonomy)
    res = CliRunner().invoke(app, ["label", "corpus", "check", "--corpus", str(out), "--data-dir", str(data)])
    assert res.exit_code == 2 and res.output.count("error:") == 1 and "rocket_science" in res.output


def test_bad_pass_file_and_missing_shared_data_write_nothing(tmp_path, taxonomy) -> None:
    inputs, a, b, adj, data = _setup(tmp_path)
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"instance_id": "o__r-0", "labels": _lab(**{"task_type.l2": ["null_reference", "dns"]}), "rationale": "x"}])
    out = tmp_path / "corpus.jsonl"
    res = CliRunner().invoke(app, ["label", "corpus", "build", "--inputs", str(inputs), "--pass-a", str(bad), "--pass-b", str(b), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "'dns' is not a child of 'bug-fix'" in res.output and res.output.count("error:") == 1
    assert not out.exists() and not list(tmp_path.glob(".corpus*"))
    build_corpus(inputs, [a], [b], adj, out, None, taxonomy)
    with pytest.raises(CorpusError, match="label_pool.jsonl: shared data file not found .*SWETRAIN_SHARED_DATA"):
        load_corpus(out, tmp_path / "nowhere", taxonomy)


def test_packaged_corpus_is_valid(taxonomy) -> None:
    rows = read_corpus(CORPUS_PATH, taxonomy)
    assert len(rows) >= 400
    assert len({r.repo.lower() for r in rows}) >= 60 and len({r.language for r in rows}) >= 5
    assert all(r.rationale and "\n" not in r.rationale for r in rows)
    assert all(r.pass_a and r.pass_b for r in rows)
