"""The one error type of task synthesis: it names the input and what went wrong."""

from __future__ import annotations


class SynthError(RuntimeError):
    """Synthesis cannot proceed for a given input (unknown package, no tests, install failure, ...).

    ``subject`` names the input (``toolz==1.2.0``, a path, a task id); the message says the problem.
    """

    def __init__(self, subject: str, message: str):
        self.subject = subject
        self.message = message
        super().__init__(f"{subject}: {message}")
