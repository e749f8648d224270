"""SWE-bench-family rows -> tasks for the docker sandbox (no image or network needed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from swetrain.tasks.datasets import CONDA_ACTIVATE, image_name, load_dataset, row_to_task
from swetrain.tasks.record import TaskLoadError, load_tasks

SWEBENCH_ROW = {
    "instance_id": "astropy__astropy-12907", "repo": "astropy/astropy", "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
    "problem_statement": "separability matrix", "patch": "diff --git a/x b/x\n", "test_patch": "diff --git a/t b/t\n",
    "FAIL_TO_PASS": json.dumps(["astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]"]),
    "PASS_TO_PASS": json.dumps(["astropy/modeling/tests/test_separable.py::test_coord_matrix"]),
    "version": "4.3", "environment_setup_commit": "298ccb478e6bf092953bca67a3d29dc6c35f6752", "hints_text": "",
    "created_at": "2022-03-03T15:14:54Z",
}


def test_image_naming_conventions():
    assert image_name("swebench", SWEBENCH_ROW) == "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"
    assert image_name("swe-gym", {"instance_id": "getmoto__moto-5752"}) == "xingyaoww/sweb.eval.x86_64.getmoto_s_moto-5752:latest"
    assert image_name("swe-smith", {"image_name": "jyangballin/swesmith.x86_64.foo"}) == "jyangballin/swesmith.x86_64.foo"
    assert image_name("r2e-gym", {"docker_image": "namanjain12/aiohttp_final:abc"}) == "namanjain12/aiohttp_final:abc"
    with pytest.raises(ValueError, match="image_name"):
        image_name("swe-smith", {"instance_id": "x"})


def test_swebench_row_becomes_a_docker_task():
    t = row_to_task("swebench", SWEBENCH_ROW)
    assert t.image == "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"
    assert t.environment_path() is None and t.source is None
    assert t.FAIL_TO_PASS[0].endswith("result6]") and t.version == "4.3"
    assert t.test_cmd.startswith(CONDA_ACTIVATE) and "pytest" in t.test_cmd
    assert t.labels["dataset"]["name"] == "swebench"


def test_r2e_gym_row_without_f2p_uses_expected_passes():
    row = {"repo_name": "aiohttp", "commit_hash": "f0d74880deec8fcd982bce639c93c5e130d41198",
           "docker_image": "namanjain12/aiohttp_final:f0d74880", "problem_statement": "bug",
           "expected_output_json": json.dumps({"tests/test_a.py::test_x": "PASSED", "tests/test_a.py::test_y": "FAILED"})}
    t = row_to_task("r2e-gym", row)
    assert t.instance_id == "aiohttp__f0d74880deec" and t.FAIL_TO_PASS == ["tests/test_a.py::test_x"]
    assert t.image == "namanjain12/aiohttp_final:f0d74880"


def test_load_and_import_cli_round_trip(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in (SWEBENCH_ROW, {**SWEBENCH_ROW, "instance_id": "a__b-1"})) + "\n")
    assert [t.instance_id for t in load_dataset(rows, "swebench")] == ["astropy__astropy-12907", "a__b-1"]
    out = tmp_path / "tasks.jsonl"
    proc = subprocess.run([sys.executable, "-m", "swetrain.cli", "tasks", "import", str(rows), "--dataset", "swebench",
                           "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    back = load_tasks(out)
    assert back[1].environment == "docker://swebench/sweb.eval.x86_64.a_1776_b-1:latest"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x"}) + "\n")
    with pytest.raises(TaskLoadError, match="bad.jsonl:1.*image_name"):
        load_dataset(bad, "swe-smith")


def test_missing_image_names_the_docker_pull(tmp_path):
    pytest.importorskip("docker")
    from swetrain.env.docker_backend import DockerError, docker_preflight
    from swetrain.env.docker_client import DockerUnavailable, docker_client

    try:
        docker_client()
    except DockerUnavailable as exc:
        pytest.skip(str(exc))
    task = row_to_task("swebench", SWEBENCH_ROW)
    with pytest.raises(DockerError) as err:
        docker_preflight([task])
    msg = str(err.value)
    assert "\n" not in msg and "docker pull swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest" in msg
