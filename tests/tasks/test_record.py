import json

import pytest

from swetrain.tasks import Task, TaskLoadError, load_tasks, save_tasks


def _row(**kw):
    row = {
        "instance_id": "x__y-1",
        "repo": "x/y",
        "base_commit": "abc",
        "problem_statement": "it breaks",
        "FAIL_TO_PASS": json.dumps(["tests/test_a.py::test_one"]),
        "PASS_TO_PASS": ["tests/test_a.py::test_two"],
    }
    row.update(kw)
    return row


def test_swebench_row_with_json_encoded_lists(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(_row()) + "\n")
    (task,) = load_tasks(f)
    assert task.FAIL_TO_PASS == ["tests/test_a.py::test_one"]
    assert task.tests == ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]


def test_round_trip_jsonl_and_parquet(tmp_path):
    tasks = [Task.model_validate(_row(instance_id=f"i{i}", labels={"route": "A"}, route="A")) for i in range(3)]
    for name in ("a.jsonl", "a.parquet"):
        out = save_tasks(tasks, tmp_path / name)
        back = load_tasks(out)
        assert [t.to_row() for t in back] == [t.to_row() for t in tasks]


def test_relative_source_resolves_against_tasks_file(tmp_path):
    (tmp_path / "repos" / "r").mkdir(parents=True)
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(_row(source="repos/r")) + "\n")
    (task,) = load_tasks(f)
    assert task.source_path() == (tmp_path / "repos" / "r").resolve()


@pytest.mark.parametrize(
    "line, field",
    [
        ('{"instance_id": "a", "FAIL_TO_PASS": "[not json"}', "FAIL_TO_PASS"),
        ('{"instance_id": "a", "PASS_TO_PASS": [1, 2]}', "PASS_TO_PASS"),
        ('{"repo": "no id"}', "instance_id"),
        ('{"instance_id": "a", "route": "Z"}', "route"),
        ("[1, 2]", None),
        ("{broken", None),
        ("[" * 100000 + "]" * 100000, None),
    ],
)
def test_malformed_row_names_file_line_field(tmp_path, line, field):
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps(_row(instance_id="ok")) + "\n\n" + line + "\n")
    with pytest.raises(TaskLoadError) as info:
        load_tasks(f)
    err = info.value
    assert err.line == 3 and err.path == str(f) and err.field == field
    assert str(f) in str(err) and ":3" in str(err)


def test_duplicate_ids_rejected(tmp_path):
    f = tmp_path / "dup.jsonl"
    f.write_text(json.dumps(_row()) + "\n" + json.dumps(_row()) + "\n")
    with pytest.raises(TaskLoadError, match="duplicate"):
        load_tasks(f)


def test_missing_file(tmp_path):
    with pytest.raises(TaskLoadError, match="does not exist"):
        load_tasks(tmp_path / "nope.jsonl")


def test_reads_shared_swebench_verified():
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "shared" / "data" / "swebench_verified.jsonl"
    if not path.exists():
        pytest.skip("shared/ data not beside the checkout")
    tasks = load_tasks(path, gradable=False)  # text-only rows (no tests): read, not verified
    assert len(tasks) == 500
    assert all(t.base_commit and t.problem_statement for t in tasks)


@pytest.mark.parametrize(
    "update, field, words",
    [
        ({"FAIL_TO_PASS": []}, "FAIL_TO_PASS", "is empty"),
        ({"FAIL_TO_PASS": None}, "FAIL_TO_PASS", "is empty"),
        ({"FAIL_TO_PASS": "[]"}, "FAIL_TO_PASS", "is empty"),
        ({"FAIL_TO_PASS": ["tests/test_a.py::t", "tests/test_a.py::t"]}, "FAIL_TO_PASS", "more than once"),
        ({"PASS_TO_PASS": ["tests/test_a.py::u", "tests/test_a.py::u"]}, "PASS_TO_PASS", "more than once"),
        ({"PASS_TO_PASS": ["tests/test_a.py::test_one"]}, "PASS_TO_PASS", "also a FAIL_TO_PASS"),
        ({"FAIL_TO_PASS": ["  "]}, "FAIL_TO_PASS", "empty test id"),
    ],
)
def test_ungradable_rows_are_refused_at_load(tmp_path, update, field, words):
    """Issue 30 (8): a row without FAIL_TO_PASS would give FULL to a no-op patch; refused, one line."""
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(_row(instance_id="ok")) + "\n" + json.dumps(_row(**update)) + "\n")
    with pytest.raises(TaskLoadError) as info:
        load_tasks(f)
    err = info.value
    assert err.line == 2 and err.field == field and words in str(err) and "\n" not in str(err)
    assert len(load_tasks(f, gradable=False)) == 2


def test_task_tier_defaults_to_standard():
    from swetrain.tasks.record import Task, task_tier

    base = dict(instance_id="a__b-1", repo="a/b", base_commit="0" * 40, problem_statement="x", patch="",
                FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[])
    assert task_tier(Task(**base)) == "standard"
    assert task_tier(Task(**base, labels={"synth": {"kind": "arith_op"}})) == "standard"
    assert task_tier(Task(**base, labels={"tier": "easy"})) == "easy"
