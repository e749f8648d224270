"""Synthesis of executable repair tasks from real projects (SWE-smith style bug injection).

Modules: :mod:`.api` (prepare_pypi / prepare_path / synthesize), :mod:`.pipeline` (Synthesizer),
:mod:`.mutate` (libcst transforms), :mod:`.runner` (pytest runs), :mod:`.statement` (issue text),
:mod:`.snapshot` (per-project git repositories), :mod:`.project` (sdists, virtual environments).
Errors are :class:`SynthError` (they name the input). Imports stay light: libcst loads only with
:mod:`.mutate`.
"""

from swetrain.tasks.synth.errors import SynthError

__all__ = ["SynthError"]
