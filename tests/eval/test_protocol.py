"""The eval protocol's metrics on hand-computed matrices, eval.json checks and the compare report."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.eval.compare import compare_runs, paired_differences
from swetrain.eval.metrics import outcome_matrix, paired_bootstrap, protocol_summary
from swetrain.eval.protocol import EvalError, EvalProtocol, load_eval, parse_seeds, summarize_record

N = float("nan")


class _T:
    def __init__(self, iid, chain, attempt, resolved, tokens=0):
        self.instance_id, self.chain, self.attempt, self.resolved, self.tokens = iid, chain, attempt, resolved, tokens


def test_protocol_summary_hand_computed():
    # seed 0: a solved at 1; b at 3; c never; d infra failure (excluded)
    # seed 1: a at 2; b never; c at 1; d never
    y = np.array([
        [[1, N, N], [0, 0, 1], [0, 0, 0], [N, N, N]],
        [[0, 1, N], [0, 0, 0], [1, N, N], [0, 0, 0]],
    ])
    tk = np.array([
        [[10, N, N], [10, 20, 30], [5, 5, 5], [N, N, N]],
        [[8, 8, N], [1, 1, 1], [4, N, N], [2, 2, 2]],
    ])
    ex = np.array([[0, 0, 0, 1], [0, 0, 0, 0]], dtype=bool)
    s = protocol_summary(y, tk, excluded=ex, routes=["A", "A", "B", None], thresholds=(0.5, 0.9))
    # seed 0 over 3 tasks: 1/3, 1/3, 2/3; seed 1 over 4 tasks: 1/4, 2/4, 2/4
    assert s["resolved_at"] == pytest.approx([(1 / 3 + 1 / 4) / 2, (1 / 3 + 1 / 2) / 2, (2 / 3 + 1 / 2) / 2])
    assert s["resolved_at_std"][0] == pytest.approx(np.std([1 / 3, 1 / 4], ddof=1))
    # seed 0: 2 first failures, 0 recovered; seed 1: 3 first failures (a, b, d), 1 recovered
    assert s["conditional_recovery"] == pytest.approx((0 + 1 / 3) / 2)
    # tokens: seed 0 per budget (10+10+5)/3, (10+30+10)/3, (10+60+15)/3; seed 1 (8+1+4+2)/4, (16+2+4+4)/4, (16+3+4+6)/4
    assert s["cumulative_tokens"] == pytest.approx([(25 / 3 + 15 / 4) / 2, (50 / 3 + 26 / 4) / 2, (85 / 3 + 29 / 4) / 2])
    assert s["tokens_to_reach"]["0.5"]["k"] == 3 and s["tokens_to_reach"]["0.9"] is None
    assert set(s["by_route"]) == {"A", "B", "unassigned"}
    assert s["by_route"]["B"]["resolved_at"] == pytest.approx([0.5, 0.5, 0.5])
    assert s["by_route"]["unassigned"]["tasks"] == 1 and s["by_route"]["unassigned"]["resolved_at"] == [0.0, 0.0, 0.0]
    assert all(a <= b for a, b in zip(s["resolved_at"], s["resolved_at"][1:]))


def test_all_null_task_counts_unresolved_unless_excluded():
    y = np.array([[[1, N], [N, N]]])
    assert protocol_summary(y)["resolved_at"] == [0.5, 0.5]
    assert protocol_summary(y, excluded=[[False, True]])["resolved_at"] == [1.0, 1.0]


def test_outcome_matrix_from_records_and_tokens():
    recs = [_T("b", 0, 1, False, 7), _T("b", 0, 2, True, 9), _T("a", 1, 1, True, 3)]
    y, ids = outcome_matrix(recs)
    assert ids == ["a", "b"] and y.shape == (2, 2, 2)
    assert y[0, 1].tolist() == [0.0, 1.0] and y[1, 0, 0] == 1.0 and np.isnan(y[0, 0]).all()
    tk, _ = outcome_matrix(recs, value=lambda r: r.tokens)
    assert tk[0, 1].tolist() == [7.0, 9.0]


def test_bootstrap_covers_the_true_difference():
    """Synthetic paired data with a known difference of 0.1: the 95% interval covers it ~95% of the time."""
    rng = np.random.default_rng(1)
    hits, trials = 0, 200
    for t in range(trials):
        base = rng.random(80) < 0.4
        a = base | (rng.random(80) < 1 / 6)  # P(a) = 0.4 + 0.6/6 = 0.5
        ci = paired_bootstrap(a.astype(float), base.astype(float), n=1000, seed=t)
        hits += ci.low <= 0.1 <= ci.high
    assert 0.88 <= hits / trials <= 0.99


def test_protocol_settings_errors():
    with pytest.raises(EvalError, match="attempts"):
        EvalProtocol.build(attempts=0)
    with pytest.raises(EvalError, match="attempts"):
        EvalProtocol.build(attempts=17)
    with pytest.raises(EvalError, match="mode"):
        EvalProtocol.build(mode="retry")
    with pytest.raises(EvalError, match="context"):
        EvalProtocol.build(context="diff")
    with pytest.raises(EvalError, match="resample"):
        EvalProtocol.build(mode="resample", context="patch-only")
    with pytest.raises(EvalError, match="preset"):
        EvalProtocol.build(preset="fast")
    with pytest.raises(EvalError, match="seeds"):
        parse_seeds("0,x")
    p = EvalProtocol.build(preset="paper", top_k=5, mode="resample")
    assert (p.temperature, p.top_p, p.top_k, p.max_turns, p.max_context_tokens, p.context) == (1.0, 0.95, 5, 150, 200_000, "none")


def _record(tasks, outcomes, seeds=(0,), K=2, mode="feedback", context="patch+verifier", policy="p"):
    rec = {"policy": policy, "mode": mode, "context": context, "attempts": K, "seeds": list(seeds), "tasks": tasks,
           "outcomes": {str(s): {t: outcomes[i][j] for j, t in enumerate(tasks)} for i, s in enumerate(seeds)},
           "tokens": {str(s): {t: [10] * len([v for v in outcomes[i][j] if v is not None]) for j, t in enumerate(tasks)}
                      for i, s in enumerate(seeds)}, "infra_failures": {str(s): {} for s in seeds}}
    rec.update(summarize_record(rec))
    return rec


def _write(path, rec):
    path.mkdir(parents=True)
    (path / "eval.json").write_text(json.dumps(rec))
    return path


@pytest.mark.parametrize("mutate,needle", [
    (lambda r: r.update(attempts=0), "attempts"),
    (lambda r: r.update(mode="x"), "mode"),
    (lambda r: r["outcomes"]["0"].update(a=[1, 0]), "first success"),
    (lambda r: r["outcomes"]["0"].update(a=[None, 1]), "after a null"),
    (lambda r: r["tokens"]["0"].update(b=[1]), "tokens"),
    (lambda r: r.pop("tasks"), "missing"),
])
def test_load_eval_names_the_problem(tmp_path, mutate, needle):
    rec = _record(["a", "b"], [[[1, None], [0, 0]]])
    mutate(rec)
    with pytest.raises(EvalError, match=needle) as info:
        load_eval(_write(tmp_path / "r", rec))
    assert "eval.json" in str(info.value)


def test_corrupt_eval_json_and_compare_cli_write_nothing(tmp_path):
    a = _write(tmp_path / "a", _record(["a", "b"], [[[1, None], [0, 0]]]))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "eval.json").write_text('{"policy": ')
    res = CliRunner().invoke(app, ["report", "compare", str(a), str(bad), "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and "not valid JSON" in res.output and not (tmp_path / "c").exists()
    other = _write(tmp_path / "o", _record(["a", "z"], [[[1, None], [0, 0]]]))
    res = CliRunner().invoke(app, ["report", "compare", str(a), str(other), "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and "do not share their tasks" in res.output and not (tmp_path / "c").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".c")]


def test_compare_writes_markdown_and_plots(tmp_path):
    tasks = [f"t{i}" for i in range(6)]
    fb = [[[1, None, None]] * 3 + [[0, 1, None]] * 2 + [[0, 0, 0]], [[1, None, None]] * 2 + [[0, 0, 1]] * 4]
    rs = [[[1, None, None]] * 3 + [[0, 0, 0]] * 3, [[0, 0, 0]] * 6]
    a = _write(tmp_path / "A", _record(tasks, fb, seeds=(0, 1), K=3))
    b = _write(tmp_path / "B", _record(tasks, rs, seeds=(0, 1), K=3, mode="resample", context="none"))
    c = _write(tmp_path / "P", _record(tasks, rs, seeds=(0, 1), K=3, context="patch-only"))
    md = compare_runs([a, b, c], tmp_path / "C", n_boot=500)
    text = md.read_text()
    for name in ("resolved_at_k.png", "tokens.png", "feedback_vs_resample.png", "context_ablation.png"):
        assert (tmp_path / "C" / name).stat().st_size > 1000 and name in text
    diffs = paired_differences(load_eval(a), load_eval(b), n=500)
    assert [d["k"] for d in diffs] == [1, 2, 3] and diffs[-1]["mean_diff"] == pytest.approx(11 / 12 - 3 / 12)  # A: 5/6 + 6/6 solved, B: 3/6 + 0/6
    assert "Paired differences vs run A" in text and "+66.7" in text
    assert "| P | `" in text and "| C | `" not in text  # rows named by their folders, not by position


def test_report_train_plots_metrics(tmp_path):
    rows = [{"step": s, "reward/mean": 0.1 * s, "rollout/resolved@1": 0.1 * s, "rollout/resolved@2": 0.15 * s} for s in (1, 2, 3)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = CliRunner().invoke(app, ["report", "train", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "report" / "train_report.md").read_text()
    assert "| 3 | 0.300 | 0.300 | 0.450 | 0.150 |" in text
    assert (tmp_path / "report" / "train_dynamics.png").stat().st_size > 1000
    res = CliRunner().invoke(app, ["report", "train", str(tmp_path / "nothing")])
    assert res.exit_code == 2 and "metrics.jsonl" in res.output


def test_eval_cli_bad_inputs_write_nothing(tmp_path):
    out = tmp_path / "e"
    for args, needle in ((["--attempts", "0"], "attempts"), (["--mode", "x"], "mode"), (["--context", "y"], "context"),
                         (["--seeds", "a"], "seeds"), (["--policy", "nope:x"], "unknown scheme")):
        res = CliRunner().invoke(app, ["eval", "--policy", "scripted-repair", "--out", str(out), *args])
        assert res.exit_code == 2 and needle in res.output, res.output
        assert not out.exists()
