"""The verifier's judgement of one patch on one task (the contract between env, agent, rollout, train)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

TestStatus = Literal["PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "MISSING"]
ResolutionStatus = Literal["FULL", "PARTIAL", "NO", "TAMPERED"]


class TestResult(BaseModel):
    """One test of FAIL_TO_PASS or PASS_TO_PASS after the patch."""

    test_id: str
    kind: Literal["FAIL_TO_PASS", "PASS_TO_PASS"]
    status: TestStatus
    traceback: str = ""  # truncated head+tail; empty for passing tests


class Verdict(BaseModel):
    """Outcome of ``Verifier.verify(task, patch)``.

    ``resolved`` is True only when every FAIL_TO_PASS and PASS_TO_PASS test passed (status FULL).
    ``TAMPERED``: the test run's outcomes cannot be trusted (a canary test came back wrong, pytest's
    own code was changed at run time, the report was replaced, a skip/xfail came from non-test code);
    reward 0 and counted as the model's failure, never as infra. ``tamper_reasons`` says why;
    ``flags`` lists added lines that look like special-casing of the test run (diagnostics only).
    ``infra_failure`` marks harness problems (timeouts of the whole run, crashes, missing repo):
    such verdicts are never scored as model failures. ``diagnostics`` is what the FC-SWE failure
    context shows the agent: failing test ids and their truncated tracebacks, as readable text.
    """

    instance_id: str
    resolved: bool = False
    status: ResolutionStatus = "NO"
    patch_applied: bool = False
    apply_method: str | None = None  # "git-apply", "git-apply-3way", "patch-fuzz" or None
    infra_failure: bool = False
    infra_reason: str | None = None
    error: str | None = None  # why the patch was rejected (empty, malformed, touches tests, ...)
    tamper_reasons: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    tests: list[TestResult] = Field(default_factory=list)
    diagnostics: str = ""
    duration_s: float = 0.0

    @property
    def reward(self) -> float:
        """0/1 reward of FC-SWE and seed 000 (eq. 2): 1 iff resolved."""
        return 1.0 if self.resolved else 0.0
