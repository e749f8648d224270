"""Does this CPU compute in bfloat16 natively?

bf16 on a CPU pays only where the instruction set has bf16 arithmetic: Intel AMX (``amx_bf16``),
AVX-512 BF16 (``avx512_bf16``), or Arm's BF16 extension (``bf16`` on Linux, ``FEAT_BF16`` on
macOS). Elsewhere torch converts every operand to float32 and back, and bf16 is far slower than
float32: on a 2-core AMD EPYC with AVX2 only (docs/policy.md, "bf16 on a CPU without bf16
instructions") a 200x576x1536 linear layer took 54 ms in bfloat16 against 6 ms in float32.

``SWETRAIN_CPU_BF16=1|0`` overrides the detection (a CPU the flags misjudge, or tests).
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import subprocess

ENV_VAR = "SWETRAIN_CPU_BF16"
X86_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
ARM_BF16_FLAGS = frozenset({"bf16"})
BF16_FLAGS = X86_BF16_FLAGS | ARM_BF16_FLAGS

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _cpuinfo() -> str:
    """``/proc/cpuinfo``, read once ("" where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _cpuinfo_values(cpuinfo: str, keys: tuple[str, ...]):
    """The values of the ``key: value`` lines of a ``/proc/cpuinfo`` text whose key is in ``keys``."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in keys:
            yield value.strip()


def parse_cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags of a ``/proc/cpuinfo`` text (x86 ``flags`` or Arm ``Features`` lines)."""
    return frozenset(flag for value in _cpuinfo_values(cpuinfo, ("flags", "features")) for flag in value.split())


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """This machine's CPU flags (empty where ``/proc/cpuinfo`` cannot be read)."""
    return parse_cpu_flags(_cpuinfo())


def _macos_bf16() -> bool:
    try:
        out = subprocess.run(["sysctl", "-n", "hw.optional.arm.FEAT_BF16"], capture_output=True,
                             text=True, timeout=5, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return out == "1"


def flags_have_native_bf16(flags: frozenset[str]) -> bool:
    """Whether ``flags`` name a bf16 arithmetic extension (x86 AMX / AVX-512 BF16, Arm BF16)."""
    return bool(flags & BF16_FLAGS)


@functools.lru_cache(maxsize=1)
def native_bf16() -> bool:
    """True when this CPU computes bf16 natively (``SWETRAIN_CPU_BF16`` overrides)."""
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in ("1", "true", "yes"):
        return True
    if raw in ("0", "false", "no"):
        return False
    if raw:
        raise ValueError(f"{ENV_VAR}={raw!r}: expected 1 or 0")
    if platform.system() == "Darwin":
        return _macos_bf16()
    return flags_have_native_bf16(cpu_flags())


def device_computes_bf16(device) -> bool:
    """Whether ``device`` (a ``torch.device``) computes bf16 natively: a CUDA GPU that supports it, or
    a CPU with bf16 arithmetic (:func:`native_bf16`). What ``bf16-native`` resolves by."""
    if device.type == "cuda":
        import torch

        return bool(torch.cuda.is_bf16_supported())
    return device.type == "cpu" and native_bf16()


def warn_slow_cpu_bf16(what: str) -> bool:
    """Log once per ``what`` that bf16 was asked for on a CPU without bf16 arithmetic; returns
    whether it warned."""
    if native_bf16():
        return False
    return _warn_once(what)


@functools.lru_cache(maxsize=None)
def _warn_once(what: str) -> bool:
    log.warning("%s: bfloat16 on this CPU (no AMX / AVX-512 BF16 / Arm BF16) runs several times slower "
                "than float32; use float32 here (set %s=1 if the detection is wrong)", what, ENV_VAR)
    return True


def cpu_model_name(cpuinfo: str | None = None) -> str | None:
    """The first ``model name`` of ``/proc/cpuinfo`` (or of ``cpuinfo``); else the platform's
    processor name, or None."""
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    return next((v for v in _cpuinfo_values(text, ("model name",)) if v), None) or platform.processor() or None


def machine_record() -> dict[str, object]:
    """What a run's timings depend on: the CPU, the cores this process may use, torch's intra-op
    threads, bf16 arithmetic on the CPU, and the GPU if any (for ``summary.json`` and reports)."""
    import torch

    from swetrain.policy.threads import usable_cores

    return {"cpu": cpu_model_name(), "cores": usable_cores(), "torch_threads": torch.get_num_threads(),
            "cpu_native_bf16": native_bf16(),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
