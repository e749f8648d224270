"""Helpers shared by the viewer's tests (a module name no other test folder uses)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

RESOLVED = "builtin__cartwise-comparison_flip-ed5b5073"  # scripted repair resolves it at attempt 1
FAILING = "builtin__calcium-constant_change-6fc46765"  # a wrong edit twice: attempt 2 sees the failure context


def swetrain(*args: str, timeout: int = 600, check: bool = True) -> subprocess.CompletedProcess:
    exe = shutil.which("swetrain")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "swetrain.cli", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})
    if check and res.returncode != 0:
        raise AssertionError(f"swetrain {' '.join(args)} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
    return res
