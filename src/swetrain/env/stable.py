"""Observations that a seed reproduces: volatile values in command output made constant.

The agent reads what its commands print, and so does attempt 2 of an FC-SWE chain (the verifier's
diagnostics). Two values there change on every run of the same command: CPython's default
``repr`` prints an object's memory address (``<Cart object at 0x7f25370b2950>``; ASLR moves it),
and pytest's summary line prints its wall time (``1 failed, 10 passed in 0.90s``). One changed
token in an observation changes every token the policy samples after it, so the same task, policy
and seed gave different episodes (stop 26: the learning bench's feedback and resample
evaluations, which share the first attempt's seed, disagreed on 3 of 9 first attempts of one
task; the first differing token was an address). :func:`stable_output` writes addresses as
``0x...`` (the task statements' convention) and drops pytest's duration, so a fixed seed gives
the same episode and paired before/after comparisons pair the same first attempts.
"""

from __future__ import annotations

import re

__all__ = ["stable_output"]

# "<... at 0x7f25370b2950>" (object, function, method reprs); only an address inside a repr, so a
# hex literal in source code that the agent views is left alone
_ADDRESS = re.compile(r"(?<= at )0x[0-9a-fA-F]{4,16}(?=>)")
# pytest's summary: "1 failed, 10 passed in 0.90s", "===== 2 passed, 1 warning in 75.03s (0:01:15) =====",
# "no tests ran in 0.01s"
_OUTCOME = r"\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
_DURATION = re.compile(rf"((?:{_OUTCOME}(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")


def stable_output(text: str) -> str:
    """``text`` with memory addresses in reprs written ``0x...`` and pytest's run time dropped."""
    return _DURATION.sub(r"\1", _ADDRESS.sub("0x...", text))
