"""report.md and the PNG plots are written with the numbers they are given."""

from __future__ import annotations

from swetrain.eval.report import write_report


def test_write_report(tmp_path):
    summary = {
        "before": {"resolved_at_1": 0.25, "resolved_at_2": 0.375, "conditional_recovery": 1 / 6},
        "after": {"resolved_at_1": 0.5, "resolved_at_2": 0.625, "conditional_recovery": 0.25},
        "steps": 2,
        "base_checkpoint": "/base",
        "trained_checkpoint": "/trained",
        "eval_tasks": 8,
        "eval_chains": 1,
    }
    metrics = [
        {"step": 1, "reward/mean": 0.2, "rollout/resolved@1": 0.25, "loss": 0.1, "grad_norm": 1.0, "time/step_s": 3.0},
        {"step": 2, "reward/mean": 0.4, "rollout/resolved@1": 0.5, "loss": -0.05, "grad_norm": 0.5, "time/step_s": 2.5},
    ]
    path = write_report(tmp_path, summary=summary, metrics=metrics, config={"recipe": "fcswe"}, notes=["a note"])
    text = path.read_text()
    assert "| Resolved@1 | 25.0% | 50.0% | +25.0 pp |" in text
    assert "| Conditional recovery | 16.7% | 25.0% | +8.3 pp |" in text
    assert "| 2 | 0.400 | 0.500 |" in text and "a note" in text
    for png in ("reward.png", "resolved_before_after.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
        assert f"]({png})" in text


def test_the_rl_set_gets_its_bars_and_its_pairs_are_counted_as_pairs(tmp_path):
    import matplotlib.image

    base = {"before": {"resolved_at_1": 0.0, "resolved_at_2": 0.0, "conditional_recovery": 0.0},
            "after": {"resolved_at_1": 0.0, "resolved_at_2": 0.0, "conditional_recovery": 0.0}, "steps": 1,
            "paired": {"metric": "resolved_at_2", "n_tasks": 60, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0}}
    frontier = {"tasks": ["a", "b", "c"], "samples": 16, "before": 0.375, "after": 0.792,
                "paired": {"metric": "frontier_success", "n_tasks": 3, "n_pairs": 48, "diff": 0.417, "ci_low": 0.25,
                           "ci_high": 0.583, "improved": 23, "regressed": 3}}
    widths = {}
    for name, summary in (("plain", base), ("rl_set", {**base, "frontier": frontier})):
        out = tmp_path / name
        report = write_report(out, summary=summary, metrics=[]).read_text()
        widths[name] = matplotlib.image.imread(out / "resolved_before_after.png").shape[1]
    # both have the paired panel; the RL set's before/after bars widen the first one. Its paired
    # line counts (task, sample) pairs, the held-out one tasks
    assert widths["rl_set"] > widths["plain"]
    assert "over 3 tasks (48 same-seed pairs)" in report and "(23 pairs improved, 3 regressed)" in report
    assert "| RL set success (train, 3 tasks x 16 fresh attempts) | 37.5% | 79.2% | +41.7 pp |" in report
    assert "over 60 tasks: +0.0 points" in report and "(? tasks improved" in report
