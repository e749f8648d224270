"""``swetrain view`` on real run directories: what the page holds, and bad input (no browser here)."""

from __future__ import annotations

import base64
import gzip
import json
import re
import threading
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from view_runs import FAILING, RESOLVED, swetrain
from swetrain.view.build import build_run, episode_detail, page_data
from swetrain.view.html import render_page
from swetrain.view.load import ViewError, open_run


def _page_data(html: str) -> dict:
    m = re.search(r'<script id="swetrain-data"[^>]*data-encoding="gzip-base64">([^<]*)</script>', html)
    assert m, "the page embeds its data"
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


def _cli(*args: str):
    from swetrain.cli import app

    return CliRunner().invoke(app, list(args))


def _by(view, iid, att):
    return next(e for e in view.index if e["iid"] == iid and e["att"] == att)


def test_rollout_run_episodes(rollout_run):
    view = build_run(rollout_run)
    assert view.run.kind == "rollout"
    assert sorted((e["iid"], e["att"], e["res"]) for e in view.index) == [
        (FAILING, 1, False), (FAILING, 2, False), (RESOLVED, 1, True)]
    ok = _by(view, RESOLVED, 1)
    assert ok["kind"] == "comparison_flip" and ok["route"] and ok["cat"]  # task labels from the built-in suite
    assert ok["stop"] == "submitted" and ok["turns"] >= 2 and ok["otok"] > 0
    ep = view.episodes[ok["key"]]
    assert ep["patch"].startswith("diff --git") and ep["verdict"]["resolved"] is True
    assert ep["verdict"]["tests"] and all(t["status"] == "PASSED" for t in ep["verdict"]["tests"])
    assert ep["notes"] == []  # a healthy record: no warning
    tok = ep["tokens"]
    assert tok["mask"].count("1") == ok["otok"]  # the loss mask covers exactly the generated ids
    assert tok["mask"][: tok["prompt_len"]] == "0" * tok["prompt_len"]
    assert all(s["eot"] for s in tok["segments"])  # every turn ended with <|im_end|>
    # the tokenizer was found (scripted repair uses the tiny model's) and decodes the prompt
    assert view.vocab.path and "tokenizer.json" in view.vocab.path
    text = "".join(view.vocab.text(tok["ids"][:40]).get(i, "") for i in tok["ids"][:40])
    assert "system" in text
    retry = view.episodes[_by(view, FAILING, 2)["key"]]
    assert retry["context"].startswith("## Previous attempt") and "Verifier" in retry["context"]
    assert view.episodes[_by(view, FAILING, 1)["key"]]["context"] is None
    summary = page_data([view])["runs"][0]
    assert summary["isolation"] and summary["recount"][0]["resolved@1"] == 0.5
    assert any(d["record"] == "rollout.json" for d in summary["declared"])


def test_cli_writes_one_offline_file(rollout_run, tmp_path):
    out = tmp_path / "page.html"
    res = _cli("view", str(rollout_run), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and "3 episodes" in res.output
    html = out.read_text()
    # self-contained: nothing to fetch (no external src/href, a CSP that forbids the network)
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "default-src 'none'" in html
    data = _page_data(html)
    assert len(data["index"]) == 3 and len(data["episodes"]) == 3
    assert data["runs"][0]["vocab"]  # token texts travel with the page


@pytest.mark.parametrize("what", ["empty", "missing", "file"])
def test_not_a_run_is_one_error_line(tmp_path, what):
    target = tmp_path / "x"
    if what == "empty":
        target.mkdir()
    elif what == "file":
        target.write_text("hello")
    res = _cli("view", str(target))
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(target) in lines[0], res.output
    assert "Traceback" not in res.output


def test_not_a_run_real_process(tmp_path):
    res = swetrain("view", str(tmp_path), check=False)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("error: ") and "not a run directory" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_truncated_part_is_a_note(run_copy, tmp_path):
    parts = sorted((run_copy / "trajectories").glob("part-*.parquet"))
    assert len(parts) >= 2
    bad = parts[0]
    bad.write_bytes(bad.read_bytes()[: bad.stat().st_size // 2])
    out = tmp_path / "p.html"
    res = _cli("view", str(run_copy), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "note(s)" in res.output
    data = _page_data(out.read_text())
    notes = data["runs"][0]["notes"]
    assert any("unreadable trajectory part" in n and bad.name in n for n in notes), notes
    assert 0 < len(data["index"]) < 3  # the other parts are still shown
    # a resumed rollout moves such a part aside; the page says so
    bad.rename(bad.with_name(f".{bad.name}.1a2b3c4d.corrupt"))
    assert any("moved aside by a resumed run" in n for n in open_run(run_copy).notes)


def test_broken_record_files_are_notes(run_copy):
    (run_copy / "rollout.json").write_text('{"config": ')
    (run_copy / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n{"step": 2, "lo')
    view = build_run(run_copy)
    notes = " | ".join(view.run.notes)
    assert "rollout.json: not valid JSON" in notes and "metrics.jsonl: 1 line(s) are not JSON" in notes
    assert view.run.metrics == [{"step": 1, "loss": 0.5}]


def _rows(run: Path):
    part = sorted((run / "trajectories").glob("part-*.parquet"))[0]
    return part, pq.read_table(part)


def test_mask_off_by_one_is_flagged(run_copy):
    """A loss mask shifted by one token (the classic multi-turn bug) shows as a warning and as
    marked tokens, found from the stored arrays alone."""
    part, table = _rows(run_copy)
    rows = table.to_pylist()
    for r in rows:
        r["assistant_mask"] = [0] + r["assistant_mask"][:-1]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), part)
    view = build_run(run_copy)
    key = next(e["key"] for e in view.index if e["src"] == "." and e["key"].split(":")[2] == "0")
    notes = view.episodes[key]["notes"]
    assert any("loss mask disagrees with the segments" in n for n in notes), notes


def test_cut_turn_and_huge_episode(rollout_run):
    view = build_run(rollout_run)
    run = open_run(rollout_run)
    part, table = _rows(rollout_run)
    row = table.to_pylist()[0]
    # a turn whose end-of-turn token is gone (a generation cut by its length limit)
    seg = row["segment_ids"]
    last = max(t for t, s in enumerate(seg) if s == 1)
    row["token_ids"] = list(row["token_ids"])
    row["token_ids"][last] = row["token_ids"][last - 1]
    detail, _ = episode_detail(row, view.vocab, None, None)
    assert detail["tokens"]["segments"][0].get("cut") is True
    assert any("end without an end-of-turn token" in n for n in detail["notes"])
    # an episode over --max-tokens: head and tail shown, a note says so
    detail, used = episode_detail(table.to_pylist()[0], view.vocab, None, None, max_tokens=64)
    assert len(detail["tokens"]["ids"]) == 64 and len(detail["tokens"]["mask"]) == 64
    assert detail["tokens"]["gap"]["skipped"] == detail["tokens"]["n"] - 64
    assert any("the page shows the first 48 and the last 16" in n for n in detail["notes"])
    assert run.kind == "rollout"


def test_compare_pairs_same_task_chain_attempt(rollout_run, tmp_path):
    other = tmp_path / "other"
    import shutil

    shutil.copytree(rollout_run, other)
    out = tmp_path / "cmp.html"
    res = _cli("view", str(rollout_run), "--compare", str(other), "--out", str(out))
    assert res.exit_code == 0, res.output
    data = _page_data(out.read_text())
    assert len(data["runs"]) == 2 and len(data["index"]) == 6
    a = {e["key"]: e for e in data["index"] if e["run"] == 0}
    b = {e["key"]: e for e in data["index"] if e["run"] == 1}
    assert len(data["pairs"]) == 3
    for ka, kb in data["pairs"].items():
        assert (a[ka]["iid"], a[ka]["chain"], a[ka]["att"], a[ka]["seed"]) == (b[kb]["iid"], b[kb]["chain"], b[kb]["att"], b[kb]["seed"])


def test_bad_options(rollout_run, tmp_path):
    res = _cli("view", str(rollout_run), "--out", str(tmp_path))
    assert res.exit_code == 2 and res.output.startswith("error: ") and "is a directory" in res.output
    res = _cli("view", str(rollout_run), "--max-mb", "0.001", "--out", str(tmp_path / "x.html"))
    assert res.exit_code == 2 and "--serve" in res.output
    res = _cli("view", str(rollout_run), "--tokenizer", str(tmp_path))
    assert res.exit_code == 2 and "no tokenizer.json" in res.output


def test_server_pages_episodes_on_loopback(rollout_run):
    from swetrain.view.server import ViewServer

    view = build_run(rollout_run, details=False)
    assert view.episodes == {}  # the server reads episodes on demand
    server = ViewServer([view], port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert server.server_address[0] == "127.0.0.1"
        page = urllib.request.urlopen(server.url, timeout=30).read().decode()
        assert '<script id="swetrain-data"' not in page and "/api/data" in page
        data = json.loads(urllib.request.urlopen(server.url + "api/data", timeout=30).read())
        assert data["mode"] == "serve" and len(data["index"]) == 3
        key = next(e["key"] for e in data["index"] if e["res"])
        ep = json.loads(urllib.request.urlopen(server.url + "api/episode?key=" + key, timeout=30).read())
        assert ep["patch"].startswith("diff --git") and ep["vocab"] and ep["tokens"]["mask"].count("1") > 0
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url + "api/episode?key=0:9:9:9", timeout=30)
    finally:
        server.shutdown()
        server.server_close()


def test_render_without_compression_escapes_script_end():
    data = {"mode": "file", "generated": "now", "runs": [], "index": [], "episodes": {}, "pairs": None,
            "x": "</script><!-- nan", "y": float("nan")}
    html = render_page(data, compress=False)
    body = re.search(r'data-encoding="json">(.*)</script>\n<noscript>', html, re.S).group(1)
    assert json.loads(body)["x"] == "</script><!-- nan" and json.loads(body)["y"] is None


def test_view_error_type():
    with pytest.raises(ViewError):
        open_run("/nonexistent/swetrain/run")
