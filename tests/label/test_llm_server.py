"""The llm backend against swetrain's own OpenAI-compatible server on 127.0.0.1 with the tiny model.

The tiny model does not know the taxonomy, so what is checked is the transport and the protocol:
real chat-completion requests reach the model, JSON repair and label snapping run on its output,
an invalid answer ends in one clear error naming the instance, and nothing invalid is cached. JSON repair itself is checked on fixed strings.
"""

from __future__ import annotations

import pytest
from label_testdata import ROWS

from swetrain.label.adapters import from_issue_change
from swetrain.label.llm import LLMBackend, LLMError, repair_json, snap


def test_json_repair_and_label_snapping() -> None:
    assert repair_json('Sure! {"a": "x", "b": [1, 2,], "c": True') == {"a": "x", "b": [1, 2], "c": True}
    assert repair_json("```json\n{'task_type_l1': 'bug-fix'}\n```") == {"task_type_l1": "bug-fix"}
    assert repair_json('{"a": "unterminated') == {"a": "unterminated"}
    assert repair_json("no json at all") is None
    assert snap("Bug_Fix", ["bug-fix", "feature"]) == "bug-fix" and snap("web backend", ["web_backend"]) == "web_backend"
    assert snap("nonsense", ["bug-fix"]) == "nonsense"


@pytest.mark.slow
def test_llm_backend_against_tiny_model_server(tmp_path, taxonomy) -> None:
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.server import start_in_thread, stop
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.policy.tiny import ensure_tiny

    configure_torch_threads()
    policy = HFPolicy(ensure_tiny(), device="cpu", dtype="float32")
    server, url = start_in_thread(policy, model_name="tiny")
    try:
        backend = LLMBackend(taxonomy, base_url=url, model="tiny", cache_dir=tmp_path / "cache", max_retries=0,
                             max_tokens=16, workers=1, json_mode=False)
        assert backend.provenance()["prompt_sha256"] == backend.prompt_hash() and len(backend.prompt_hash()) == 16
        with pytest.raises(LLMError, match=r"stage 1 of t-1: no valid answer after 1 attempts"):
            backend.stage1([from_issue_change(ROWS[0])])
        assert backend.stats["requests"] == 1 and backend.stats["invalid"] == 1  # retries: see test_llm.py
        assert not list((tmp_path / "cache").glob("*.json"))
        with pytest.raises(LLMError, match="model 'other'|HTTP 4"):  # the server names the model it serves
            LLMBackend(taxonomy, base_url=url, model="other", cache_dir=tmp_path / "c2", max_retries=0, max_tokens=4,
                       connect_retries=0).stage1([from_issue_change(ROWS[0])])
    finally:
        stop(server)
