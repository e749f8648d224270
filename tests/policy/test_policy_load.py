import pytest

from swetrain.policy import PolicySpecError, load_policy
from swetrain.policy.hf import HFPolicy
from swetrain.policy.openai_client import OpenAIPolicy
from swetrain.policy.server import start_in_thread, stop


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("", "non-empty"),
        ("gpt5", "unknown scheme 'gpt5'"),
        ("hf:", "missing the model folder"),
        ("hf:/definitely/not/here", "no config.json"),
        ("tiny:huge", "unknown tiny preset"),
        ("smollm2:x", "takes no argument"),
        ("openai:127.0.0.1:8000/v1", "http"),
        ("openai:http://127.0.0.1:1/v1#model=m", "tokenizer"),
        ("openai:http://127.0.0.1:1/v1#tokenizer=/t&temp=1", "unknown option"),
    ],
)
def test_bad_specs_are_explained(spec, needle):
    with pytest.raises(PolicySpecError, match="expected one of") as info:
        load_policy(spec)
    assert needle in str(info.value)


def test_vllm_spec_without_vllm(tiny_path):
    from swetrain.policy.vllm_backend import vllm_available

    if vllm_available():
        pytest.skip("vLLM is installed here")
    with pytest.raises(PolicySpecError, match="vLLM is not installed"):
        load_policy(f"vllm:{tiny_path}")


def test_hf_and_openai_specs(tiny_path, hf_policy):
    policy = load_policy(f"hf:{tiny_path}", device="cpu")
    assert isinstance(policy, HFPolicy) and policy.path == tiny_path
    server, url = start_in_thread(hf_policy, model_name="tiny")
    try:
        client = load_policy(f"openai:{url}#model=tiny&tokenizer={tiny_path}")
        assert isinstance(client, OpenAIPolicy) and client.model == "tiny"
        found = load_policy(f"openai:{url}#tokenizer={tiny_path}")
        assert found.model == "tiny"
    finally:
        stop(server)


def test_tiny_spec_builds_into_swetrain_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path))
    policy = load_policy("tiny", device="cpu")
    assert isinstance(policy, HFPolicy)
    assert str(policy.path).startswith(str(tmp_path))
