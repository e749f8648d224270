"""Atomic, resumable phases: each phase is a plain run directory under the pipeline's ``DIR``.

A phase runs in ``DIR/.tmp/<name>.<pid>/`` and is renamed into ``DIR/<name>/`` only after its
``phase.json`` done-marker is written, so ``DIR/<name>/`` either holds a whole phase or does not
exist. A re-run skips every phase with a done-marker and deletes what an interrupted run left in
``.tmp`` (a kill -9 loses at most the unfinished phase, which is re-run from its start: no phase's
trajectories are ever stored twice or half).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swetrain.train.checkpoint import write_json_atomic

DONE = "phase.json"


class PhaseStore:
    def __init__(self, root: str | os.PathLike, log: Callable[[str], None] = print) -> None:
        self.root = Path(root)
        self.tmp_root = self.root / ".tmp"
        self.log = log
        self.ran: list[str] = []
        self.skipped: list[str] = []

    def path(self, name: str) -> Path:
        return self.root / name

    def done(self, name: str) -> dict[str, Any] | None:
        marker = self.root / name / DONE
        if not marker.is_file():
            return None
        return json.loads(marker.read_text())

    def _tmp_prefix(self, name: str) -> str:
        return name.replace("/", "__") + "."

    def run(self, name: str, fn: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """Run phase ``name`` (``fn(tmp_dir) -> result``) unless done; return its ``phase.json``."""
        info = self.done(name)
        if info is not None:
            self.skipped.append(name)
            self.log(f"[skip] {name} (done in {info.get('seconds', 0):.0f} s)")
            return info
        final = self.root / name
        if final.exists():  # cannot happen through this class; never trust a marker-less folder
            shutil.rmtree(final)
        self.tmp_root.mkdir(parents=True, exist_ok=True)
        for stale in self.tmp_root.glob(self._tmp_prefix(name) + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = self.tmp_root / f"{self._tmp_prefix(name)}{os.getpid()}"
        tmp.mkdir(parents=True)
        self.log(f"[run]  {name}")
        t0 = time.monotonic()
        try:
            result = fn(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        info = {"phase": name, "seconds": round(time.monotonic() - t0, 2),
                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **result}
        write_json_atomic(tmp / DONE, info)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, final)
        self.ran.append(name)
        self.log(f"[done] {name} in {info['seconds']:.0f} s")
        return info
