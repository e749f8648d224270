"""bf16 only where the CPU computes it: flag parsing, the override, and what dtype/precision resolve to."""

from __future__ import annotations

import logging

import pytest
import torch

from swetrain.policy import cpu_features
from swetrain.policy.hf import resolve_dtype
from swetrain.train.update import autocast_context, resolve_precision

EPYC_AVX2 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu vme de pse tsc msr pae sse sse2 avx avx2 fma bmi2
"""
SAPPHIRE_RAPIDS = """processor\t: 0
flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8
"""
GRAVITON3 = """processor\t: 0
Features\t: fp asimd evtstrm aes sha1 sha2 crc32 atomics fphp asimdhp sve bf16 i8mm
"""


@pytest.fixture(autouse=True)
def _fresh_detection(monkeypatch):
    monkeypatch.delenv(cpu_features.ENV_VAR, raising=False)
    cpu_features.native_bf16.cache_clear()
    cpu_features._warn_once.cache_clear()
    yield
    cpu_features.native_bf16.cache_clear()
    cpu_features._warn_once.cache_clear()


@pytest.mark.parametrize("text, native", [(EPYC_AVX2, False), (SAPPHIRE_RAPIDS, True), (GRAVITON3, True), ("", False)])
def test_flags_decide_native_bf16(text, native):
    flags = cpu_features.parse_cpu_flags(text)
    assert cpu_features.flags_have_native_bf16(flags) is native
    if text == EPYC_AVX2:
        assert {"avx2", "fma"} <= flags and "amd" not in flags  # only the flags line, not the model name


def _force(monkeypatch, value: str) -> None:
    monkeypatch.setenv(cpu_features.ENV_VAR, value)
    cpu_features.native_bf16.cache_clear()


def test_override_and_bad_value(monkeypatch):
    _force(monkeypatch, "1")
    assert cpu_features.native_bf16() is True
    _force(monkeypatch, "0")
    assert cpu_features.native_bf16() is False
    _force(monkeypatch, "maybe")
    with pytest.raises(ValueError, match="SWETRAIN_CPU_BF16='maybe'"):
        cpu_features.native_bf16()


def test_bf16_native_resolves_by_cpu(monkeypatch):
    cpu = torch.device("cpu")
    _force(monkeypatch, "0")
    assert resolve_dtype("bf16-native", cpu) == torch.float32
    assert resolve_precision(cpu, "bf16-native") == "fp32"
    with autocast_context(cpu, "bf16-native"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    _force(monkeypatch, "1")
    assert resolve_dtype("bf16-native", cpu) == torch.bfloat16
    assert resolve_precision(cpu, "bf16-native") == "bf16"
    with autocast_context(cpu, "bf16-native"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    # the other values are unchanged by the detection
    assert resolve_dtype("auto", cpu) == torch.float32
    assert resolve_precision(cpu, "auto") == "auto"


def test_explicit_bf16_is_kept_with_one_warning(monkeypatch, caplog):
    _force(monkeypatch, "0")
    cpu = torch.device("cpu")
    with caplog.at_level(logging.WARNING, logger="swetrain.policy.cpu_features"):
        assert resolve_dtype("bfloat16", cpu) == torch.bfloat16
        assert resolve_dtype(torch.bfloat16, cpu) == torch.bfloat16
    warnings = [r for r in caplog.records if "several times slower than float32" in r.getMessage()]
    assert len(warnings) == 1 and "dtype bfloat16" in warnings[0].getMessage()
    caplog.clear()
    _force(monkeypatch, "1")
    with caplog.at_level(logging.WARNING, logger="swetrain.policy.cpu_features"):
        resolve_dtype("bfloat16", cpu)
        resolve_precision(cpu, "bf16")
    assert not caplog.records


def test_bad_dtype_names_the_choices():
    with pytest.raises(ValueError, match="bf16-native"):
        resolve_dtype("bfloat17", torch.device("cpu"))


def test_warm_start_key_names_the_precision_it_builds(monkeypatch):
    from swetrain.recipes.tiny.warmstart import PRESET_CONFIGS, build_precision, warm_start_path

    cfg = PRESET_CONFIGS["smollm2-easy"]
    assert cfg.precision == "bf16-native"
    if torch.cuda.is_available():
        pytest.skip("the CPU resolution is what is tested")
    _force(monkeypatch, "1")
    assert build_precision(cfg.precision) == "bf16" and "-w4bf16-easy" in warm_start_path("smollm2-easy").name
    _force(monkeypatch, "0")
    assert build_precision(cfg.precision) == "fp32" and "-w4fp32-easy" in warm_start_path("smollm2-easy").name


def test_machine_record_names_what_timings_depend_on():
    assert cpu_features.cpu_model_name(EPYC_AVX2) == "AMD EPYC"
    record = cpu_features.machine_record()
    assert set(record) == {"cpu", "cores", "torch_threads", "cpu_native_bf16", "gpu"}
    assert record["cores"] >= 1 and record["torch_threads"] == torch.get_num_threads()
    assert record["cpu_native_bf16"] is cpu_features.native_bf16()
