"""Integrity of the shipped built-in suite (tasks.jsonl + repos/): size, splits, labels, tiers, and
a sample verified through the real verifier (buggy -> unresolved, gold -> resolved)."""

from __future__ import annotations

import collections
import hashlib
import random

import pytest

from swetrain.tasks.builtin import SPLITS, TASKS_FILE, load_builtin, load_catalog, repo_name, shipped_tasks
from swetrain.tasks.builtin.build import HELDOUT_REPOS, split_of
from swetrain.tasks.record import task_tier
from swetrain.tasks.synth.mutate import CRASH_EXCEPTION, CRASH_KINDS, KINDS
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


# The 255 standard-tier rows as first shipped: sha256 of their JSONL lines, sorted and joined by
# newlines. The easy tier was appended next to them (build --append); they must never change.
STANDARD_ROWS = 255
STANDARD_ROWS_SHA256 = "456e48a6297d1be631e98d071a41a71af40206c614494fb12a8cb707fb12771a"


def test_standard_rows_are_byte_identical(shipped):
    lines = TASKS_FILE.read_bytes().splitlines()
    assert len(lines) == len(shipped)
    standard = sorted(ln for ln, t in zip(lines, shipped) if task_tier(t) == "standard")
    assert len(standard) == STANDARD_ROWS
    assert hashlib.sha256(b"\n".join(standard)).hexdigest() == STANDARD_ROWS_SHA256


def test_tiers_are_labelled_and_in_both_splits(shipped):
    tiers = collections.Counter((task_tier(t), t.split) for t in shipped)
    assert set(tiers) == {(tier, split) for tier in ("standard", "easy") for split in SPLITS}, tiers
    for t in shipped:
        kind = t.labels["synth"]["kind"]
        if task_tier(t) == "easy":
            assert t.labels["tier"] == "easy" and kind in CRASH_KINDS, t.instance_id
            assert t.labels["task_type"] == {"l1": "bug_fix", "l2": "crash_exception"}
            assert f"-{kind}-" in t.instance_id
            text = t.problem_statement
            assert "Traceback (most recent call last):" in text and CRASH_EXCEPTION[kind] in text, t.instance_id
            assert f'File "{t.labels["synth"]["file"]}", line ' in text, t.instance_id
        else:
            assert "tier" not in t.labels and kind in KINDS, t.instance_id
    easy_held = [t for t in shipped if task_tier(t) == "easy" and t.split == "heldout"]
    assert {repo_name(t) for t in easy_held} >= set(HELDOUT_REPOS)
    assert {t.labels["synth"]["kind"] for t in shipped if task_tier(t) == "easy"} == set(CRASH_KINDS)


@pytest.mark.slow
def test_easy_tier_sample_crashes_before_and_resolves_with_gold(home):
    """One easy task per crash kind (both splits represented), through the real verifier: the
    buggy tree's FAIL_TO_PASS tests crash with the kind's exception in a traceback through the
    mutated file; the gold patch resolves the task."""
    from swetrain.env.verifier import Verifier

    easy = [t for t in load_builtin() if task_tier(t) == "easy"]
    rng = random.Random(0)
    sample = []
    for i, kind in enumerate(CRASH_KINDS):
        split = SPLITS[i % 2]
        pool = [t for t in easy if t.labels["synth"]["kind"] == kind and t.split == split] or \
            [t for t in easy if t.labels["synth"]["kind"] == kind]
        sample.append(rng.choice(sorted(pool, key=lambda t: t.instance_id)))
    assert {t.split for t in sample} == set(SPLITS)
    v = Verifier(timeout_s=120)
    for t in sample:
        buggy = v.verify(t, NOOP_PATCH)
        assert buggy.patch_applied and not buggy.resolved and not buggy.infra_failure, t.instance_id
        failed = {r.test_id: r.traceback for r in buggy.tests if r.status in ("FAILED", "ERROR")}
        assert set(t.FAIL_TO_PASS) <= set(failed), t.instance_id
        kind, path = t.labels["synth"]["kind"], t.labels["synth"]["file"]
        shown = [failed[f] for f in t.FAIL_TO_PASS if CRASH_EXCEPTION[kind] in failed[f] and path in failed[f]]
        assert shown, (t.instance_id, failed[t.FAIL_TO_PASS[0]][-800:])
        gold = v.verify(t, t.patch)
        assert gold.resolved and not gold.infra_failure, (t.instance_id, gold.diagnostics)
