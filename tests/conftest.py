"""Shared test fixtures. Tests run on CPU, one torch thread, offline."""

import os
import subprocess
import threading

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def tmpfs(tmp_path):
    """``tmpfs(size)``: a real tmpfs of that size, unmounted after the test (skips where mounting is
    not allowed): the disk-full tests need a real small filesystem."""
    mounted = []

    def mount(size: str):
        folder = tmp_path / f"fs{len(mounted)}"
        folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root; the disk-full test needs a real small filesystem")
        try:
            res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"cannot run mount: {exc}")
        if res.returncode != 0:
            pytest.skip(f"mounting a tmpfs is not permitted here: {res.stderr.strip() or res.returncode}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


@pytest.fixture(scope="session")
def tiny_path():
    """The real tiny policy (built once into the cache); tests/policy builds its own fresh one."""
    from swetrain.policy.tiny import ensure_tiny

    return ensure_tiny()


@pytest.fixture(scope="session")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)


def _run_threads(fn, args_list, delays=None, timeout=120.0):
    """Call fn(*args) for each args in its own thread, released together (then after its delay)."""
    results: list = [None] * len(args_list)
    errors: list = [None] * len(args_list)
    start = threading.Event()

    def run(i):
        start.wait()
        if delays and delays[i]:
            threading.Event().wait(delays[i])
        try:
            results[i] = fn(*args_list[i])
        except Exception as exc:  # noqa: BLE001
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(args_list))]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join(timeout=timeout)
    return results, errors


@pytest.fixture
def run_threads():
    """``run_threads(fn, args_list, delays=None)`` -> (results, errors), one thread per call."""
    return _run_threads
