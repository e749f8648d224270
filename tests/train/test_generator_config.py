"""``rollout.generator``: hf (default) or vllm; bad values and unsupported combinations are one error
naming the key. (The vLLM path itself runs in the optional job: tests/train/test_rl_vllm.py.)"""

from __future__ import annotations

import pytest

from swetrain.policy.vllm_backend import vllm_available
from swetrain.train.config import ConfigError, load_config


def _error(*overrides: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config("grpo", overrides=list(overrides))
    return str(info.value)


def test_default_is_transformers_and_vllm_is_accepted():
    assert load_config("grpo").rollout.generator == "hf"
    cfg = load_config("fcswe", overrides=["rollout.generator=vllm", "rollout.vllm.kv_cache_mb=128",
                                          "rollout.vllm.dtype=float32", "rollout.vllm.max_model_len=1024"])
    assert cfg.rollout.generator == "vllm"
    assert cfg.rollout.vllm.policy_kwargs(seed=7) == {
        "dtype": "float32", "gpu_memory_utilization": 0.5, "seed": 7,
        "kv_cache_memory_bytes": 128 << 20, "max_model_len": 1024,
    }
    # unset engine sizes are left to VLLMPolicy (512 MiB KV cache on CPU, the model's window)
    assert set(load_config("grpo").rollout.vllm.policy_kwargs(seed=0)) == {"dtype", "gpu_memory_utilization", "seed"}
    # the engine-side mapping is unchanged by the generator: batch_generation=auto batches both
    # (batched calls with vllm, one continuously batched decode with hf)
    vllm_engine, hf_engine = cfg.rollout.engine_config(1), load_config("fcswe").rollout.engine_config(1)
    assert vllm_engine.batch_generation and hf_engine.batch_generation
    assert vllm_engine == hf_engine


def test_unknown_generator_names_the_key():
    text = _error("rollout.generator=sglang")
    assert "rollout.generator: " in text and "unknown generator 'sglang'; choose one of hf, vllm" in text


def test_openai_server_is_refused_at_config_time():
    text = _error("rollout.generator=openai:http://127.0.0.1:8000/v1")
    assert "rollout.generator: " in text and "not supported in training" in text and "generator=vllm" in text
    assert "not supported in training" in _error("rollout.generator=openai")


@pytest.mark.parametrize("override", ["rollout.top_p=0.9", "rollout.top_k=20"])
def test_vllm_needs_untruncated_sampling(override):
    text = _error("rollout.generator=vllm", override)
    assert "rollout.generator=vllm needs rollout.top_p=1 and rollout.top_k=0" in text
    load_config("grpo", overrides=[override])  # fine with the transformers generator


def test_vllm_with_ray_is_refused():
    assert "rollout.generator=vllm: not supported with rollout.backend=ray" in _error(
        "rollout.generator=vllm", "rollout.backend=ray")


def test_vllm_section_keys_are_checked():
    assert "rollout.vllm.kv_cach_mb: unknown key" in _error("rollout.vllm.kv_cach_mb=64")
    assert "rollout.vllm.dtype: " in _error("rollout.vllm.dtype=int8")
    assert "rollout.vllm.gpu_memory_utilization: " in _error("rollout.vllm.gpu_memory_utilization=1.5")


@pytest.mark.skipif(vllm_available(), reason="vLLM is installed here")
def test_trainer_without_vllm_says_so(tmp_path, tiny_path):
    from swetrain.train.rl import RLTrainer

    cfg = load_config("grpo", overrides=["rollout.generator=vllm", "logging.tensorboard=false"])
    with pytest.raises(ValueError, match=r"^rollout\.generator=vllm: vLLM is not installed in this environment"):
        RLTrainer(cfg, tmp_path / "run", tasks=[object()], policy_path=tiny_path)
