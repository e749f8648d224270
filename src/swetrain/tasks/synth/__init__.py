"""Synthesis of executable repair tasks from real projects (SWE-smith style bug injection).

Entry points: :func:`swetrain.tasks.synth.api.synthesize_pypi`, :func:`synthesize_path` and the
lower-level :class:`Synthesizer`. Errors are :class:`SynthError` (they name the input).
"""

from swetrain.tasks.synth.errors import SynthError
from swetrain.tasks.synth.mutate import KINDS

__all__ = ["KINDS", "SynthError"]
