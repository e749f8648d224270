r"""A shipped warm start's mastery over the train tasks, measured offline: the quickstart's probe prior.

Paper 000's curriculum keeps a mastery map across phases; a warm start that ships as package data
can ship the map of its own base phase too. The tiny base solves a few percent of the built-in
train tasks at all (docs/training.md), so a probe of 24 random train tasks finds a frontier
(0 < p̂ < 1) of zero or one task, and RL gets no signal. With the prior, the quickstart probes the
tasks where the warm start succeeded offline first, and pools its own rollouts with the prior's
(the same weights and sampling settings, so the same base phase).

The prior is used only for the weights it was measured on: the file records the SHA-256 of the
model's ``model.safetensors`` (and, for a warm start shipped as an adapter, the adapter's, since
another CPU may round the merge differently), and a base with other weights gets no prior (the
quickstart says so). Only train tasks are ever probed; the held-out split is never read here.

Build it (once per shipped warm start, ~30 minutes on 2 cores for the 248 train tasks x 4)::

    python -m swetrain.recipes.tiny.mastery_prior --policy tiny-sft --out src/swetrain/recipes/tiny/data/tiny-sft.mastery.json

and for the SmolLM2 warm start, its crash tier only (84 train tasks x 2, ~25 minutes on 2 AMX cores)::

    SWETRAIN_TORCH_THREADS=2 python -m swetrain.recipes.tiny.mastery_prior --policy smollm2-easy-sft --tier easy \
        --rollouts 2 --out src/swetrain/recipes/tiny/data/smollm2-easy-sft.mastery.json
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swetrain.curriculum.mastery import MasteryError, MasteryMap

PRIOR_FORMAT = "swetrain-mastery-prior"
PRIOR_VERSION = 1
PRIOR_PHASE = "base"  # the estimates are the base phase's, pooled with the run's own probe
SHIPPED = {"tiny-sft": Path(__file__).parent / "data" / "tiny-sft.mastery.json",
           "smollm2-easy-sft": Path(__file__).parent / "data" / "smollm2-easy-sft.mastery.json"}

__all__ = ["MasteryPrior", "PRIOR_FORMAT", "SHIPPED", "build_prior", "load_prior", "probe_order", "resolve_prior",
           "weights_sha256"]


def weights_sha256(model_dir: str | os.PathLike) -> str:
    """SHA-256 of a model folder's weights (``model.safetensors``; else every ``*.safetensors`` in name order)."""
    folder = Path(model_dir)
    files = [folder / "model.safetensors"] if (folder / "model.safetensors").is_file() else sorted(folder.glob("*.safetensors"))
    if not files:
        raise MasteryError(f"{folder}: no *.safetensors weights to identify the model by")
    digest = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@dataclass
class MasteryPrior:
    """A mastery map of one model's weights, with how it was measured."""

    mastery: MasteryMap
    weights_sha256: str
    settings: dict[str, Any]
    source: str = ""
    adapter_sha256: str | None = None  # the shipped adapter the weights were merged from, if any

    def to_dict(self) -> dict[str, Any]:
        return {"format": PRIOR_FORMAT, "version": PRIOR_VERSION, "weights_sha256": self.weights_sha256,
                **({"adapter_sha256": self.adapter_sha256} if self.adapter_sha256 else {}),
                "settings": self.settings, "mastery": self.mastery.to_dict()}

    def save(self, path: str | os.PathLike) -> Path:
        from swetrain.label.io import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=1) + "\n")
        return Path(path)

    def summary(self) -> dict[str, Any]:
        return {"source": self.source, "weights_sha256": self.weights_sha256, **self.mastery.summary(),
                "rollouts_per_task": self.settings.get("rollouts")}


def load_prior(path: str | os.PathLike) -> MasteryPrior:
    """Read a prior file; a missing, unreadable or malformed one raises :class:`MasteryError` naming it."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MasteryError(f"{p}: mastery prior does not exist") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MasteryError(f"{p}: not a readable JSON mastery prior ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != PRIOR_FORMAT:
        raise MasteryError(f"{p}: not a mastery prior (expected a JSON object with format {PRIOR_FORMAT!r})")
    if data.get("version") != PRIOR_VERSION:
        raise MasteryError(f"{p}: mastery prior version {data.get('version')!r} is not supported (expected {PRIOR_VERSION})")
    sha = data.get("weights_sha256")
    if not isinstance(sha, str) or len(sha) != 64:
        raise MasteryError(f"{p}: 'weights_sha256' must be the 64-hex SHA-256 of the model's weights")
    adapter = data.get("adapter_sha256")
    if adapter is not None and (not isinstance(adapter, str) or len(adapter) != 64):
        raise MasteryError(f"{p}: 'adapter_sha256' must be the 64-hex SHA-256 of the shipped adapter's weights")
    settings = data.get("settings") if isinstance(data.get("settings"), dict) else {}
    return MasteryPrior(MasteryMap.from_dict(data.get("mastery"), f"{p} (mastery)"), sha, settings, str(p), adapter)


def adapter_sha256(model_dir: str | os.PathLike) -> str | None:
    """The SHA-256 of the shipped adapter a model folder was merged from
    (:func:`swetrain.recipes.tiny.shipped_adapter.adapter_warm_start` records it), else None.

    A merge computes base + low-rank delta in float32; CPUs with other vector units may round it
    differently, so the same shipped adapter can give weights with another hash on another machine.
    The adapter identifies the warm start there."""
    try:
        info = json.loads((Path(model_dir) / "warmstart.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    sha = info.get("adapter_sha256") if isinstance(info, dict) else None
    return sha if isinstance(sha, str) and len(sha) == 64 else None


def resolve_prior(choice: str, policy: str, base_path: str | os.PathLike) -> tuple[MasteryPrior | None, str]:
    """The prior the quickstart uses, and one line saying why (or why not).

    ``choice``: ``shipped`` (the file shipped for the policy spec, if any), ``none``, or a path.
    A file whose weights hash is not the base's is not used (a rebuilt warm start is another policy).
    A path that cannot be read raises :class:`MasteryError`; so does an unknown shipped file only when asked for by path.
    """
    if choice == "none":
        return None, "no mastery prior (--prior-mastery none)"
    if choice == "shipped":
        path = SHIPPED.get(policy)
        if path is None or not path.is_file():
            return None, f"no mastery prior ships for policy {policy!r}"
    else:
        path = Path(choice)
    prior = load_prior(path)
    sha = weights_sha256(base_path)
    measured = f"{len(prior.mastery.estimated())} train tasks measured offline"
    if sha == prior.weights_sha256:
        return prior, f"mastery prior {path} ({measured} on these weights)"
    adapter = adapter_sha256(base_path)
    if adapter is not None and adapter == prior.adapter_sha256:
        return prior, (f"mastery prior {path} ({measured} on a merge of the same shipped adapter "
                       f"{adapter[:12]}; this CPU's merge has weights {sha[:12]})")
    return None, (f"mastery prior {path} not used: it was measured on weights {prior.weights_sha256[:12]}, "
                  f"the base's are {sha[:12]}")


def probe_order(tasks: list[Any], prior: MasteryPrior | None, seed: int) -> list[Any]:
    """``tasks`` in the order the quickstart probes them: with a prior, its frontier (0 < p̂ < 1,
    most informative first), then tasks it always solved, then tasks it solved at least once
    historically, then the rest; each group (and everything, without a prior) in a seeded shuffle."""
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    if prior is None:
        return shuffled

    def rank(task: Any) -> tuple[int, float]:
        rec = prior.mastery.instances.get(task.instance_id)
        p = None if rec is None else rec.p_hat
        if p is not None and 0.0 < p < 1.0:
            return 0, -p * (1.0 - p)
        if p == 1.0:
            return 1, 0.0
        if rec is not None and rec.ever_solved:
            return 2, 0.0
        return 3, 0.0

    return sorted(shuffled, key=rank)  # stable: the shuffle orders ties


def seed_map(mastery: MasteryMap, prior: MasteryPrior | None, instance_ids: list[str]) -> int:
    """Copy the prior's base-phase estimates (and success evidence) of ``instance_ids`` into
    ``mastery``; the run's probe (same phase) then adds its rollouts to them. Returns how many."""
    if prior is None:
        return 0
    copied = 0
    for iid in instance_ids:
        rec = prior.mastery.instances.get(iid)
        if rec is None or rec.current is None:
            continue
        mastery.refresh(iid, rec.current.rollouts, rec.current.successes, PRIOR_PHASE)
        if rec.ever_solved:
            mastery.add_success_evidence([iid])
        copied += 1
    return copied


def build_prior(policy: str, out: Path, *, rollouts: int = 4, seed: int = 31337, runs_dir: Path | None = None,
                tasks_file: Path | None = None, overrides: tuple[str, ...] = (), tier: str | None = None) -> MasteryPrior:
    """Measure ``policy`` on every train task (of ``tier`` when given; ``rollouts`` single attempts
    each, the quickstart's sampling settings and the base's own, e.g. bf16 generation for SmolLM2)
    and write the prior to ``out``."""
    import tempfile

    from swetrain.curriculum.mastery import estimate_mastery
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.recipes.tiny.quickstart_settings import QUICKSTART_ROLLOUT, base_overrides, suite_tasks
    from swetrain.train.config import load_config

    configure_torch_threads()
    config = load_config("fcswe", overrides=[*QUICKSTART_ROLLOUT, *base_overrides(policy), *overrides])
    base = resolve_policy_path(policy)
    tasks = suite_tasks("train", tasks_file, tier)
    if not tasks:
        raise MasteryError(f"{tasks_file or 'the built-in suite'}: no train tasks to measure")
    mastery = MasteryMap(policy=policy)
    sampling = config.rollout.sampling()
    with tempfile.TemporaryDirectory(prefix="swetrain-prior-") as tmp:
        estimate_mastery(HFPolicy(base, dtype=config.rollout.hf_dtype), tasks, runs_dir or Path(tmp), mastery,
                         phase=PRIOR_PHASE, rollouts=rollouts, seed=seed, sampling=sampling,
                         workers=config.rollout.workers, **config.env.run_kwargs())
    settings = {"policy": policy, "rollouts": rollouts, "seed": seed, "split": "train",
                "tasks": str(tasks_file) if tasks_file else "builtin", "tier": tier, "edit_match": config.env.edit_match,
                "sampling": sampling.model_dump(), "dtype": str(config.rollout.hf_dtype)}
    prior = MasteryPrior(mastery, weights_sha256(base), settings, str(out), adapter_sha256(base))
    prior.save(out)
    return prior


def main(argv: list[str] | None = None) -> int:
    import argparse

    from swetrain.recipes.tiny.quickstart_settings import TIERS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument("--seed", type=int, default=31337)
    ap.add_argument("--tier", default=None, choices=TIERS, help="only the train tasks of this tier")
    ap.add_argument("--runs-dir", type=Path, default=None, help="keep the rollouts' trajectories here")
    args = ap.parse_args(argv)
    prior = build_prior(args.policy, args.out, rollouts=args.rollouts, seed=args.seed, runs_dir=args.runs_dir, tier=args.tier)
    print(json.dumps(prior.summary()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
