"""Run metrics: one JSON object per line in ``RUN_DIR/metrics.jsonl``, TensorBoard events in
``RUN_DIR/tensorboard/``, and Weights & Biases when it is installed *and* enabled in the config."""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class MetricsLogger:
    def __init__(
        self,
        run_dir: Path,
        *,
        tensorboard: bool = True,
        wandb: bool = False,
        wandb_project: str = "swetrain",
        config: dict[str, Any] | None = None,
        purge_step: int | None = None,
    ) -> None:
        self.path = Path(run_dir) / "metrics.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lines = sum(1 for _ in open(self.path, encoding="utf-8")) if self.path.is_file() else 0
        self.tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            # purge_step drops events of steps a resumed run re-does (no duplicates in TensorBoard)
            self.tb = SummaryWriter(str(Path(run_dir) / "tensorboard"), purge_step=purge_step)
        self.wandb = None
        if wandb:
            try:
                import wandb as _wandb  # type: ignore[import-not-found]
            except ImportError:
                log.warning("logging.wandb=true but wandb is not installed; logging to JSONL/TensorBoard only")
            else:
                self.wandb = _wandb.init(project=wandb_project, config=config or {}, dir=str(run_dir), resume="allow")

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        row = {"step": step, **{k: _clean(v) for k, v in metrics.items()}}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.lines += 1
        if self.tb is not None:
            for key, value in row.items():
                if key != "step" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    self.tb.add_scalar(key, value, step)
            self.tb.flush()
        if self.wandb is not None:
            self.wandb.log({k: v for k, v in row.items() if isinstance(v, (int, float))}, step=step)

    def close(self) -> None:
        if self.tb is not None:
            self.tb.close()
        if self.wandb is not None:
            self.wandb.finish()


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
