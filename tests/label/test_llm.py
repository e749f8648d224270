"""The llm backend against a real HTTP server on 127.0.0.1 that answers like a chat endpoint.

The server is deterministic: the first answer to every new conversation is invalid (stage 1: not
JSON; stage 2: an L2 outside the hierarchy), and it answers correctly once the client has sent the
correction message. This exercises retries on invalid output, validation, caching and concurrency.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from label_testdata import ROWS

from swetrain.label.adapters import from_issue_change
from swetrain.label.labeler import Labeler
from swetrain.label.llm import LLMBackend, LLMError
from swetrain.label.schema import check_labels
from swetrain.label.taxonomy import default_taxonomy


class _Handler(BaseHTTPRequestHandler):
    log: list[dict] = []
    always_invalid = False
    in_flight = 0
    max_in_flight = 0
    wait_for_company = 0.0  # seconds a request waits for a second one to arrive (concurrency tests)
    lock = threading.Lock()

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        with cls.lock:
            cls.log.append(body)
            cls.in_flight += 1
            cls.max_in_flight = max(cls.max_in_flight, cls.in_flight)
        try:
            deadline = time.monotonic() + cls.wait_for_company
            while cls.in_flight < 2 and time.monotonic() < deadline:  # a concurrent client sends another
                time.sleep(0.01)
            self._answer(body)
        finally:
            with cls.lock:
                cls.in_flight -= 1

    def _answer(self, body: dict) -> None:
        msgs = body["messages"]
        system, user = msgs[0]["content"], msgs[1]["content"]
        retry = len(msgs) > 2 and "invalid" in msgs[-1]["content"] and "POISON" not in user
        tx = default_taxonomy()
        if system.startswith("You annotate"):
            if not retry or self.always_invalid:
                content = "Sure! The task is a bug fix."
            else:
                content = json.dumps({
                    "task_type_l1": "bug-fix" if re.search(r"wrong|error|bug", user, re.I) else "feature",
                    "task_type_rationale": "the statement reports wrong behaviour",
                    "domain_l1": "cms_ecommerce" if "shop" in user else "data_science",
                    "domain_rationale": "repository metadata unavailable; inferred from the name",
                    "code_language": "python", "task_spec_type": "specific", "dependency_context": "codebase"})
        else:
            tt = re.search(r"task_type L1 = ([\w-]+)", system).group(1)
            dm = re.search(r"domain L1 = ([\w-]+)", system).group(1)
            kids_tt = tx.family("task_type", tt).child_names or ("unspecified",)
            kids_dm = tx.family("domain", dm).child_names or ("unspecified",)
            first = not retry
            content = "```json\n" + json.dumps({
                "task_type_l2": ["not_a_label"] if first else [kids_tt[0]], "task_type_l2_rationale": "r",
                "domain_l2": [kids_dm[0]], "domain_l2_rationale": "r",
                "scope": "single_file", "complexity": "local_reasoning", "time": "small_1h", "scale_rationale": "one file"}) + "\n```"
        reply = {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def server():
    _Handler.log = []
    _Handler.always_invalid = False
    _Handler.max_in_flight = 0
    _Handler.wait_for_company = 0.0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def test_llm_backend_retries_validates_and_caches(server, tmp_path, taxonomy) -> None:
    backend = LLMBackend(taxonomy, base_url=server, model="tiny", cache_dir=tmp_path / "cache", workers=4, api_key="k")
    rows = ROWS + [{**ROWS[0], "instance_id": f"copy-{i}", "problem_statement": f"variant {i}: wrong total"} for i in range(4)]
    out = Labeler(backend, taxonomy=taxonomy).label_rows(rows)
    assert len(out) == len(rows)
    for r in out:
        assert check_labels(r["labels"], taxonomy) == []
        assert r["labels"]["task_type"]["l2"] != ["not_a_label"]
    assert out[0]["labels"]["task_type"]["l1"] == "bug-fix"
    assert out[1]["labels"]["domain"]["l1"] == "cms_ecommerce" and out[1]["route"] == "B"
    # every instance: stage 1 invalid + retry, stage 2 invalid + retry -> 4 requests each
    assert backend.stats["invalid"] == 2 * len(rows)
    assert len(_Handler.log) == 4 * len(rows)
    body = _Handler.log[0]
    assert body["model"] == "tiny" and body["response_format"] == {"type": "json_object"}
    assert "bug-fix" in body["messages"][0]["content"] and "ISO/IEC" in body["messages"][0]["content"]
    stage2 = next(b for b in _Handler.log if b["messages"][0]["content"].startswith("You refine"))
    assert "boundaries:" in stage2["messages"][0]["content"]  # decision records are in the prompt
    # a second run with the same cache asks nothing
    n = len(_Handler.log)
    again = LLMBackend(taxonomy, base_url=server, model="tiny", cache_dir=tmp_path / "cache")
    out2 = Labeler(again, taxonomy=taxonomy).label_rows(rows)
    assert len(_Handler.log) == n and again.stats["cache_hits"] == 2 * len(rows)
    assert [r["labels"] for r in out2] == [r["labels"] for r in out]
    # a different model is a different cache key
    other = LLMBackend(taxonomy, base_url=server, model="other", cache_dir=tmp_path / "cache")
    other._one_stage1(from_issue_change(ROWS[0]))
    assert len(_Handler.log) == n + 2


def test_llm_backend_gives_up_with_a_clear_error(server, tmp_path, taxonomy) -> None:
    _Handler.always_invalid = True
    backend = LLMBackend(taxonomy, base_url=server, cache_dir=tmp_path / "c", max_retries=2)
    with pytest.raises(LLMError, match="stage 1 of t-1: no valid answer after 3 attempts: reply is not a JSON object"):
        backend.stage1([from_issue_change(ROWS[0])])
    assert len(_Handler.log) == 3
    assert not list((tmp_path / "c").glob("*.json"))  # nothing invalid is cached


def test_llm_backend_needs_an_endpoint_and_reports_unreachable(tmp_path, taxonomy, monkeypatch) -> None:
    monkeypatch.delenv("SWETRAIN_LABEL_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="needs an endpoint"):
        LLMBackend(taxonomy, cache_dir=tmp_path)
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    backend = LLMBackend(taxonomy, base_url=f"http://127.0.0.1:{port}/v1", cache_dir=tmp_path, timeout=2)
    import swetrain.label.llm as llm_mod

    monkeypatch.setattr(llm_mod.time, "sleep", lambda s: None)
    with pytest.raises(LLMError, match="cannot reach the endpoint"):
        backend.stage1([from_issue_change(ROWS[0])])


class _BadHandler(BaseHTTPRequestHandler):
    mode = "slow"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.mode == "slow":
            threading.Event().wait(1.5)  # not time.sleep: the test patches it (it is the global module)
        data = {"slow": b"{}", "not_json": b"<html>proxy error</html>", "a_list": b"[1, 2]"}[self.mode]
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout)
            pass


@pytest.mark.parametrize("mode, message", [
    ("slow", "no answer within 0.3 s"),
    ("not_json", "not an OpenAI chat completion response"),
    ("a_list", "not an OpenAI chat completion response"),
])
def test_llm_backend_bad_endpoint_replies_are_llm_errors(mode, message, tmp_path, taxonomy, monkeypatch) -> None:
    import swetrain.label.llm as llm_mod

    monkeypatch.setattr(llm_mod.time, "sleep", lambda s: None)
    _BadHandler.mode = mode
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _BadHandler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        backend = LLMBackend(taxonomy, base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1", cache_dir=tmp_path,
                             timeout=0.3)
        with pytest.raises(LLMError, match=message):
            backend.stage1([from_issue_change(ROWS[0])])
        assert backend.stats["requests"] == (4 if mode == "slow" else 1)  # only transport failures are retried
    finally:
        srv.shutdown()
        srv.server_close()


def test_keep_going_labels_rows_concurrently_and_leaves_out_a_bad_one(server, tmp_path) -> None:
    """`label tasks --keep-going` sends `--workers` rows at once, keeps the input order, and a row
    that never gets a valid answer is reported by its line and left out alone (exit 1)."""
    from label_testdata import write_jsonl
    from typer.testing import CliRunner

    from swetrain.cli import app

    rows = [{**ROWS[0], "instance_id": f"k-{i}", "problem_statement": f"case {i}: wrong total" + (" POISON" if i == 2 else "")}
            for i in range(6)]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    _Handler.wait_for_company = 3.0  # a one-at-a-time client never has company: max_in_flight stays 1
    res = CliRunner().invoke(app, ["label", "tasks", str(src), "--backend", "llm", "--base-url", server, "--model", "tiny",
                                   "--workers", "4", "--max-retries", "1", "--keep-going", "--out", str(out),
                                   "--cache-dir", str(tmp_path / "cache")])  # not the user's reply cache
    assert res.exit_code == 1, res.output
    assert f"{src}:3: no label: stage 1 of k-2" in res.output and "skipped 1 row(s)" in res.output
    assert [json.loads(line)["instance_id"] for line in out.read_text().splitlines()] == ["k-0", "k-1", "k-3", "k-4", "k-5"]
    assert _Handler.max_in_flight >= 2  # rows were labelled concurrently
