"""pytest plugin loaded by swetrain's verifier (``-p swetrain_hang_guard``): per-test time limit.

A test (with its setup and teardown) that runs longer than ``--swetrain-test-timeout`` seconds is
stopped with a failure saying so, so a patch that makes a test hang gets a definite FAILED verdict
instead of stalling the whole run. Uses SIGALRM (main thread, POSIX); a hang that never returns to
Python is caught by the verifier's whole-run timeout instead.
"""

from __future__ import annotations

import signal

import pytest


def pytest_addoption(parser):
    parser.addoption("--swetrain-test-timeout", type=float, default=0.0, help="per-test time limit in seconds (0 = none)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = item.config.getoption("swetrain_test_timeout")
    if not limit or not hasattr(signal, "SIGALRM"):
        yield
        return

    def _stop(signum, frame):
        pytest.fail(f"swetrain: test exceeded the {limit:g}s per-test limit and was stopped (hanging test)", pytrace=False)

    previous = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
