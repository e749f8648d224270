"""Integrity of the shipped built-in suite (tasks.jsonl + repos/): size, splits, labels, and a
sample verified through the real verifier (buggy -> unresolved, gold -> resolved)."""

from __future__ import annotations

import collections
import random

import pytest

from swetrain.tasks.builtin import SPLITS, TASKS_FILE, load_builtin, load_catalog, repo_name, shipped_tasks
from swetrain.tasks.builtin.build import HELDOUT_REPOS, split_of
from swetrain.tasks.synth.pipeline import NOOP_PATCH
from swetrain.tasks.synth.statement import leaks

pytestmark = pytest.mark.skipif(not TASKS_FILE.exists(), reason="built-in tasks.jsonl not generated yet")


@pytest.fixture(scope="module")
def shipped():
    return shipped_tasks()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One SWETRAIN_HOME for the module: snapshots are materialised once."""
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("swetrain-home")
        mp.setenv("SWETRAIN_HOME", str(path))
        yield path


@pytest.fixture(scope="module")
def catalog():
    return {e["name"]: e for e in load_catalog()}


def test_suite_size_and_fields(shipped, catalog):
    assert len(shipped) >= 200
    assert len({t.instance_id for t in shipped}) == len(shipped)
    for t in shipped:
        assert t.FAIL_TO_PASS and t.PASS_TO_PASS, t.instance_id
        assert not set(t.FAIL_TO_PASS) & set(t.PASS_TO_PASS)
        assert t.patch.startswith("diff --git") and t.test_patch == ""
        assert "tests/" not in "".join(l for l in t.patch.splitlines() if l.startswith("diff --git"))
        assert t.problem_statement.strip() and not leaks(t.problem_statement, t.patch)
        entry = catalog[repo_name(t)]
        assert t.labels["domain"]["l1"] == entry["domain_l1"] and t.route == entry["route"]
        assert t.source is None and t.environment is None


def test_coverage_of_repos_domains_routes(shipped):
    repos = collections.Counter(repo_name(t) for t in shipped)
    assert len(repos) >= 12
    assert len({t.labels["domain"]["l1"] for t in shipped}) >= 9
    assert {t.route for t in shipped} == {"A", "B", "C"}


def test_split_is_fixed_and_disjoint_by_repo(shipped):
    assert {t.split for t in shipped} <= set(SPLITS)
    for t in shipped:
        assert t.split == split_of(t), t.instance_id  # the documented rule, frozen in the file
    train_repos = {repo_name(t) for t in shipped if t.split == "train"}
    assert train_repos and not train_repos & set(HELDOUT_REPOS)
    held = [t for t in shipped if t.split == "heldout"]
    assert {repo_name(t) for t in held} >= set(HELDOUT_REPOS) & {repo_name(t) for t in shipped}
    # within training repositories some tasks are held out too
    assert any(t.split == "heldout" and repo_name(t) not in HELDOUT_REPOS for t in shipped)
    routes_held = {t.route for t in held if repo_name(t) in HELDOUT_REPOS}
    assert routes_held == {"A", "B", "C"}


def test_load_builtin_materialises_exact_commits(home):
    from swetrain.env.gitutil import git

    tasks = load_builtin()
    assert len(tasks) == len(shipped_tasks())
    for t in tasks:
        src = t.source_path()
        assert src is not None and src.is_dir() and str(src).startswith(str(home))
    by_repo = {repo_name(t): t for t in tasks}
    for t in by_repo.values():  # one commit check per repository (cheap)
        assert git(t.source_path(), "cat-file", "-t", t.base_commit).stdout.decode().strip() == "commit"
    train, held = load_builtin("train"), load_builtin("heldout")
    assert len(train) + len(held) == len(tasks) and not {t.instance_id for t in train} & {t.instance_id for t in held}
    with pytest.raises(ValueError):
        load_builtin("test")


@pytest.mark.slow
def test_sample_verified_through_real_verifier(home):
    from swetrain.env.verifier import Verifier

    tasks = load_builtin()
    rng = random.Random(0)
    by_route = collections.defaultdict(list)
    for t in tasks:
        by_route[t.route].append(t)
    sample = [rng.choice(by_route[r]) for r in sorted(by_route)]
    v = Verifier(timeout_s=120)
    for t in sample:
        gold = v.verify(t, t.patch)
        assert gold.resolved and not gold.infra_failure, (t.instance_id, gold.diagnostics)
        buggy = v.verify(t, NOOP_PATCH)
        assert buggy.patch_applied and not buggy.resolved and not buggy.infra_failure, t.instance_id
        failed = {r.test_id for r in buggy.tests if r.status in ("FAILED", "ERROR")}
        assert failed & set(t.FAIL_TO_PASS)


def test_cli_exports_with_split_field(tmp_path, home):
    from typer.testing import CliRunner

    from swetrain.cli import app
    from swetrain.tasks.record import load_tasks

    out = tmp_path / "builtin.jsonl"
    res = CliRunner().invoke(app, ["tasks", "builtin", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = load_tasks(out)
    assert len(rows) >= 200 and {t.split for t in rows} == {"train", "heldout"}
    assert all(t.source_path().is_dir() for t in rows)


def test_another_tasks_file_never_replaces_the_suites_snapshot(home, tmp_path):
    """A tasks file with a subset of one repository's tasks (a curriculum frontier) gets its own
    snapshot: the shipped suite's snapshot, which running workspaces read, keeps every base commit."""
    import json

    from swetrain.env.gitutil import git

    full = load_builtin()
    repo = repo_name(full[0])
    same_repo = [t for t in full if repo_name(t) == repo]
    assert len(same_repo) > 1
    subset = tmp_path / "frontier.jsonl"
    subset.write_text(json.dumps(same_repo[0].model_dump(mode="json") | {"source": None}) + "\n")
    [one] = load_builtin(path=subset)
    assert one.source_path() != same_repo[0].source_path()
    for t in same_repo:  # the suite's snapshot still holds every task's base commit
        assert git(t.source_path(), "cat-file", "-t", t.base_commit).stdout.decode().strip() == "commit"
    assert git(one.source_path(), "cat-file", "-t", one.base_commit).stdout.decode().strip() == "commit"
    assert [t.source_path() for t in load_builtin() if repo_name(t) == repo] == [t.source_path() for t in same_repo]
