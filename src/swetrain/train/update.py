"""From verified trajectories to a policy update: rewards -> advantages -> token advantages -> loss.

Pure training math glued to a torch model; no rollout, no I/O. Used by :class:`~swetrain.train.rl.RLTrainer`
and directly by the tests.

* :func:`trajectory_advantages`: per-attempt rewards of each task's chains (``attempt_rewards``:
  local / broadcast / last) and group-relative advantages over each task's rewarded attempts
  (``get_advantage_estimator``: grpo / rloo / active_set). Rows the scheme leaves unrewarded, and
  infrastructure failures, get NaN (they are not trained on).
* :class:`PolicyUpdater`: :meth:`~PolicyUpdater.prepare` recomputes old log-probs (pre-update
  policy) and, for Agentic-miniRL, the frozen reference's log-probs; builds token advantages
  (scalar broadcast, K1-in-reward + return-to-go, or a distillation loss's teacher advantages),
  applies the runtime penalty on invalid messages. :meth:`~PolicyUpdater.run_epochs` then runs
  ``epochs`` x ``mini_batches`` optimizer steps with micro-batches and gradient accumulation whose
  weighting reproduces the full mini-batch loss exactly (token-mean: weight by trainable tokens;
  seq-mean reductions: weight by trajectories with a trainable token). What the policy loss needs
  (reference, teachers, old log-probs, its parameters) comes from its registry spec.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from swetrain.train.batch import Batch, TrainSample, collate, plan_micro_batches, split_mini_batches, token_logprobs
from swetrain.train.config import AlgoConfig, OptimConfig

if TYPE_CHECKING:
    from swetrain.agent.trajectory import Trajectory

#: a collective over ranks (FSDP path): tensor -> summed (or max) tensor
Reduce = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class AttemptRecord:
    """What the advantage estimator needs to know about one executed (or skipped) attempt."""

    instance_id: str
    chain: int
    attempt: int
    resolved: bool | None  # None: not executed / infrastructure failure (never scored)


def trajectory_advantages(records: Sequence[AttemptRecord], algo: AlgoConfig) -> tuple[list[float], list[float]]:
    """Rewards and scalar advantages of each record (NaN where the record is not trained on).

    For each task, outcomes ``y[c, r]`` form a ``[G, R]`` matrix (NaN where not executed); the
    reward scheme gives ``r[c, r]`` (FC-SWE: trajectory-local rewards), and all rewarded attempts of
    the task form one comparison group (FC-SWE's active set V_x; for GRPO/RLOO with R = 1, the G
    independent attempts).
    """
    from swetrain.algos import attempt_rewards, get_advantage_estimator

    by_task: dict[str, list[int]] = defaultdict(list)
    for i, rec in enumerate(records):
        by_task[rec.instance_id].append(i)
    rewards = [math.nan] * len(records)
    for idxs in by_task.values():
        g = max(records[i].chain for i in idxs) + 1
        r_max = max(records[i].attempt for i in idxs) + 1
        y = torch.full((g, r_max), math.nan)
        for i in idxs:
            rec = records[i]
            if rec.resolved is not None:
                y[rec.chain, rec.attempt] = 1.0 if rec.resolved else 0.0
        r = attempt_rewards(y, algo.reward_scheme)
        for i in idxs:
            rewards[i] = float(r[records[i].chain, records[i].attempt])
    est = get_advantage_estimator(algo.advantage)
    rew = torch.tensor(rewards, dtype=torch.float64)
    adv = est(rew, [rec.instance_id for rec in records], eps=algo.adv_eps)
    advantages = [float(a) if not math.isnan(r) else math.nan for a, r in zip(adv.tolist(), rewards)]
    return rewards, advantages


def resolve_precision(device: torch.device, precision: str) -> str:
    """``bf16-native`` -> ``bf16`` where ``device`` computes bf16 natively (a bf16 GPU, a CPU with
    AMX / AVX-512 BF16 / Arm BF16: :mod:`swetrain.policy.cpu_features`), else ``fp32``; an explicit
    ``bf16`` on a CPU without bf16 arithmetic is kept, with a warning; other values unchanged."""
    from swetrain.policy.cpu_features import device_computes_bf16, warn_slow_cpu_bf16

    if precision == "bf16-native":
        return "bf16" if device_computes_bf16(device) else "fp32"
    if precision == "bf16" and device.type == "cpu":
        warn_slow_cpu_bf16("precision bf16")
    return precision


def autocast_context(device: torch.device, precision: str):
    """The autocast context of ``precision`` on ``device``: bf16 when asked (or ``auto`` on a bf16 GPU,
    or ``bf16-native`` where the device computes bf16 natively), else a no-op context."""
    precision = resolve_precision(device, precision)
    if precision == "bf16" or (precision == "auto" and device.type == "cuda"):
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.autocast("cuda", dtype=torch.bfloat16)
        if precision == "bf16" and device.type == "cpu":
            return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@dataclass
class PreparedRow:
    """One trainable sample with what the epoch loop reads: its old log-probs (None: taken from the
    training forward, the on-policy shortcut; zeros when the loss scores none) and token advantages."""

    sample: TrainSample
    old: torch.Tensor | None
    advantages: torch.Tensor


@dataclass
class Prepared:
    """A step's rows ready for the epoch loop, with the preparation's diagnostics (KL, MOPD)."""

    rows: list[PreparedRow]
    metrics: dict[str, float]
    on_policy: bool


@dataclass
class EpochStats:
    """Accumulators of the epoch loop (sums over optimizer steps, divided at the end)."""

    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    n_opt: int = 0  # optimizer steps taken
    n_skipped: int = 0  # zero-advantage rows skipped, over all epochs
    gap_sum: float = 0.0  # |log pi_learner - log pi_rollout| of the first step's rows
    gap_n: int = 0


class PolicyUpdater:
    """Runs the policy-gradient update of one RL step on a causal LM (see the module docstring).

    :meth:`update` = :meth:`prepare` (old/reference/teacher log-probs and token advantages) then
    :meth:`run_epochs` (optimizer steps). What the loss needs comes from its registry spec
    (:class:`swetrain.algos.losses.PolicyLossSpec`), never from its name.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler | None,
        algo: AlgoConfig,
        optim: OptimConfig,
        *,
        pad_id: int = 0,
        ref_model: torch.nn.Module | None = None,
        precision: str = "auto",
        device: torch.device | str = "cpu",
        world_size: int = 1,
        all_reduce: Reduce | None = None,
        all_reduce_max: Reduce | None = None,
        teachers: dict[str, torch.nn.Module] | None = None,
    ) -> None:
        from swetrain.algos.losses import get_loss_spec

        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.algo = algo
        self.optim = optim
        self.pad_id = pad_id
        self.ref_model = ref_model
        self.precision = precision
        self.device = torch.device(device)
        self.world_size = world_size
        self.all_reduce = all_reduce  # callable(tensor) -> summed tensor across ranks (FSDP path)
        self.all_reduce_max = all_reduce_max  # callable(tensor) -> max across ranks (FSDP path)
        self.loss = get_loss_spec(algo.policy_loss)
        self.loss_fn = self.loss.fn
        self.teachers = teachers  # distillation losses: route -> frozen expert (the reference is ref_model)
        if algo.kl_beta > 0 and ref_model is None:
            raise ValueError("algo.kl_beta > 0 needs a frozen reference model (ref_model)")
        if self.loss.needs_teachers and not teachers:
            raise ValueError(f"policy_loss {self.loss.name} needs frozen teachers (route -> model)")
        if self.loss.needs_reference and ref_model is None:
            raise ValueError(f"policy_loss {self.loss.name} needs a frozen reference model (ref_model)")

    # ------------------------------------------------------------------ FSDP lock-step
    def _passes(self, n: int, sharded: bool = True) -> int:
        """How many forward passes this rank must run: the most any rank runs (FSDP all-gathers
        parameters in every forward, so ranks that ran fewer would wait forever)."""
        if self.all_reduce_max is None or not sharded:
            return n
        return int(self.all_reduce_max(torch.tensor([n], dtype=torch.long)).item())

    def _filler_logprobs(self, model: torch.nn.Module) -> torch.Tensor:
        """A forward pass on a 2-token filler batch (it only keeps this rank in step)."""
        ids = torch.full((1, 2), self.pad_id, dtype=torch.long, device=self.device)
        with autocast_context(self.device, self.precision):
            return token_logprobs(model, ids, torch.ones_like(ids), torch.tensor([[0.0, 1.0]], device=self.device))

    # ------------------------------------------------------------------ scoring
    @torch.no_grad()
    def _score(self, model: torch.nn.Module, samples: Sequence[TrainSample]) -> list[torch.Tensor]:
        """Per-sample log-probs ``[len(sample)]`` under ``model`` (no grad, micro-batched)."""
        was_training = model.training
        model.eval()
        out: list[torch.Tensor | None] = [None] * len(samples)
        plan = plan_micro_batches([len(s.token_ids) for s in samples], self.optim.micro_batch_tokens)
        n_pass = self._passes(len(plan), sharded=model is self.model)  # agreed before any forward
        for rows in plan:
            batch = collate([samples[i] for i in rows], self.pad_id).to(self.device)
            with autocast_context(self.device, self.precision):
                logp = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.loss_mask).float()
            for j, i in enumerate(rows):
                out[i] = logp[j, : len(samples[i].token_ids)].cpu()
        for _ in range(n_pass - len(plan)):
            self._filler_logprobs(model)
        model.train(was_training)
        return out  # type: ignore[return-value]

    def token_advantages(
        self,
        samples: Sequence[TrainSample],
        old: Sequence[torch.Tensor],
        ref: Sequence[torch.Tensor] | None,
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        """Per-token advantages of each sample (0 off the loss mask) and KL diagnostics.

        Scalar advantages are broadcast to trainable tokens (FC-SWE, GRPO). With
        ``use_return_to_go`` (Agentic-miniRL, seed 000 eq. 14) the scalar (RLOO-centred) return is
        placed on the last trainable token, ``-beta * K1(old, ref)`` is added on every trainable
        token, and the reverse cumulative sum gives A_t. Finally, when ``runtime_penalty`` is on,
        every token of a flagged (invalid) assistant message gets ``invalid_penalty`` (FC-SWE: -5).
        """
        from swetrain.algos.kl import kl_metrics, returns_to_go, token_rewards_with_k1
        from swetrain.algos.losses import apply_invalid_override

        algo = self.algo
        result: list[torch.Tensor] = []
        k1s, k3s, n_tok = 0.0, 0.0, 0
        for k, s in enumerate(samples):
            mask = torch.as_tensor(s.loss_mask, dtype=torch.bool)
            if isinstance(s.advantage, (list, tuple)):
                adv = torch.as_tensor(s.advantage, dtype=torch.float32)
            elif algo.use_return_to_go:
                terminal = torch.tensor([float(s.advantage)])
                lo = old[k].unsqueeze(0)
                lr = ref[k].unsqueeze(0) if (ref is not None and algo.kl_beta > 0) else lo
                rew = token_rewards_with_k1(terminal, lo, lr, mask.unsqueeze(0), algo.kl_beta)
                adv = returns_to_go(rew, mask.unsqueeze(0), algo.gamma)[0].float()
                if ref is not None and algo.kl_beta > 0 and mask.any():
                    m = kl_metrics(lo, lr, mask.unsqueeze(0))
                    n = int(mask.sum())
                    k1s += m["kl/k1_mean"] * n
                    k3s += m["kl/k3_mean"] * n
                    n_tok += n
            else:
                adv = torch.full((len(s.token_ids),), float(s.advantage))
            if algo.runtime_penalty and any(s.invalid):
                inv = (torch.as_tensor(s.invalid, dtype=torch.bool) & mask).unsqueeze(0)
                adv = apply_invalid_override(adv.unsqueeze(0), inv, algo.invalid_penalty)[0].float()
            result.append(torch.where(mask, adv, torch.zeros_like(adv)))
        metrics = {}
        if n_tok:
            metrics = {"kl/k1_mean": k1s / n_tok, "kl/k3_mean": k3s / n_tok}
        return result, metrics

    def mopd_token_advantages(self, samples: Sequence[TrainSample]) -> tuple[list[torch.Tensor], dict[str, float]]:
        """MOPD/ExOPD token advantages (seed 000, eq. 25) of student trajectories.

        Each sample is scored by the frozen teacher of its route (``meta["route"]``) and by the frozen
        reference: K + 1 frozen forwards for K routes, each teacher only on its own route's rows.
        ``log q`` is the rollout's behaviour log-prob (the student's current log-prob when the
        rollout recorded none). Returns per-token advantages (0 off the loss mask) and diagnostics:
        student-teacher K1, teacher-reference gap, gate-open share, overall and per route.
        """
        from swetrain.algos.distill import mopd_advantages, mopd_metrics

        assert self.teachers is not None and self.ref_model is not None
        cfg = self.algo.mopd
        by_route: dict[str, list[int]] = defaultdict(list)
        for k, s in enumerate(samples):
            route = s.meta.get("route")
            if route not in self.teachers:
                raise ValueError(
                    f"MOPD: trajectory of {s.group!r} has route {route!r}, which has no teacher "
                    f"(teachers: {', '.join(sorted(self.teachers))})"
                )
            by_route[str(route)].append(k)
        ref = self._score(self.ref_model, samples)
        teacher: list[torch.Tensor | None] = [None] * len(samples)
        for route in sorted(by_route):
            rows = by_route[route]
            for k, lp in zip(rows, self._score(self.teachers[route], [samples[k] for k in rows])):
                teacher[k] = lp
        missing = [k for k, s in enumerate(samples) if not s.meta.get("has_behavior_logprobs", True)]
        current = self._score(self.model, [samples[k] for k in missing]) if missing else []
        behavior = [torch.as_tensor(s.behavior_logprobs, dtype=torch.float32) for s in samples]
        for k, lp in zip(missing, current):
            behavior[k] = lp
        result: list[torch.Tensor] = []
        sums: dict[str, float] = defaultdict(float)
        counts: dict[str, float] = defaultdict(float)
        for k, s in enumerate(samples):
            mask = torch.as_tensor(s.loss_mask, dtype=torch.bool)
            lt, lb, lr = teacher[k].float(), behavior[k].float(), ref[k].float()  # type: ignore[union-attr]
            adv = mopd_advantages(lt, lb, lr, lam=cfg.lam, gate=cfg.gate, clip=cfg.clip)
            result.append(torch.where(mask, adv, torch.zeros_like(adv)))
            n = float(mask.sum())
            if n == 0:
                continue
            m = mopd_metrics(lt.unsqueeze(0), lb.unsqueeze(0), lr.unsqueeze(0), mask.unsqueeze(0))
            route = str(s.meta.get("route"))
            for key, value in m.items():
                for scope in (key, f"{key}/{route}"):
                    sums[scope] += value * n
                    counts[scope] += n
        metrics = {key: sums[key] / counts[key] for key in sums}
        metrics["mopd/frozen_forwards"] = float(len(by_route) + 1)
        return result, metrics

    # ------------------------------------------------------------------ preparation
    def on_policy_shortcut(self) -> bool:
        """Whether this update may take its old log-probs from the training forward itself.

        Exactly on-policy means: one epoch of one mini-batch (one optimizer step), so the policy
        that would score the old log-probs is the policy of the first and only step, and the old
        log-probs equal the current ones detached (ratio 1, clipping and masks inactive, the same
        gradient). It also needs: a loss that scores old log-probs at all (its spec's
        ``scores_old_logprobs``; ``mopd`` scores none), no advantage that reads them
        (``use_return_to_go`` with ``kl_beta > 0``: K1 of old to the reference enters the returns),
        and no active dropout (a training-mode forward would then differ from the eval-mode
        scoring forward). ``optim.on_policy_shortcut=false`` always scores them separately. TIS
        (``minirl``) still reads the rollout's behaviour log-probs; rows without them use the old
        log-probs, as before.
        """
        optim = self.optim
        if not getattr(optim, "on_policy_shortcut", True) or not self.loss.scores_old_logprobs:
            return False
        if optim.epochs != 1 or optim.mini_batches != 1 or self._advantages_read_old():
            return False
        return not has_active_dropout(self.model)

    def _advantages_read_old(self) -> bool:
        """The token advantages depend on the old log-probs: K1 to the reference in the
        return-to-go (seed 000, eq. 14)."""
        return self.algo.use_return_to_go and self.algo.kl_beta > 0

    def prepare(self, samples: Sequence[TrainSample]) -> Prepared:
        """Token advantages and old log-probs of every trainable sample (no optimizer step).

        * distillation losses (spec ``needs_teachers``): the routed teachers' advantages, eq. 25;
        * K1 in the return-to-go: old and reference log-probs first, then the advantages;
        * otherwise the outcome advantages, then the old log-probs the loss needs
          (:meth:`_old_logprobs`).
        """
        on_policy = self.on_policy_shortcut()
        old: list[torch.Tensor | None] | None = None
        if self.loss.needs_teachers:
            token_adv, diag = self.mopd_token_advantages(samples)
        elif self._advantages_read_old():
            scored = self._score(self.model, samples)
            token_adv, diag = self.token_advantages(samples, scored, self._score(self.ref_model, samples))
            old = list(scored)
        else:
            # advantages without K1 do not read the old log-probs: find the rows with a training
            # signal first, so that only those need scoring
            token_adv, diag = self.token_advantages(samples, _zeros(samples), None)
        if old is None:
            old = self._old_logprobs(samples, token_adv, on_policy)
        rows = [PreparedRow(s, o, a) for s, o, a in zip(samples, old, token_adv)]
        return Prepared(rows, diag, on_policy)

    def _old_logprobs(
        self, samples: Sequence[TrainSample], token_adv: Sequence[torch.Tensor], on_policy: bool
    ) -> list[torch.Tensor | None]:
        """The pre-update log-probs the loss reads: zeros when its spec scores none; None (filled
        from the training forward) on the on-policy shortcut; with ``skip_zero_advantage`` and
        scalar advantages, scored only on rows with a nonzero token advantage; else all rows."""
        if not self.loss.scores_old_logprobs:
            return list(_zeros(samples))
        if on_policy:
            return [None] * len(samples)
        if not (self.optim.skip_zero_advantage and not self.algo.use_return_to_go):
            return list(self._score(self.model, samples))
        active = [k for k, a in enumerate(token_adv) if bool(a.any())]
        old: list[torch.Tensor | None] = [None] * len(samples)
        for k, o in zip(active, self._score(self.model, [samples[k] for k in active])):
            old[k] = o
        return old

    # ------------------------------------------------------------------ epoch loop
    def update(self, samples: Sequence[TrainSample], generator: torch.Generator | None = None) -> dict[str, float]:
        """One RL step's policy update on ``samples`` (trainable rows only); returns metrics."""
        samples = [s for s in samples if s.n_trainable > 0 and not _is_nan(s.advantage)]
        if not samples and self.all_reduce_max is None:  # under FSDP the other ranks need this one
            return {"update/skipped": 1.0}
        prepared = self.prepare(samples)
        stats = self.run_epochs(prepared, generator)
        return self._update_metrics(prepared, stats)

    def run_epochs(self, prepared: Prepared, generator: torch.Generator | None = None) -> EpochStats:
        """``optim.epochs`` passes of ``optim.mini_batches`` optimizer steps over the prepared rows."""
        stats = EpochStats()
        params = self.loss.params_of(self.algo)
        self.model.train()
        for _epoch in range(self.optim.epochs):
            # every rank takes the same number of mini-batches (an empty one still steps)
            n_mini = self._passes(min(self.optim.mini_batches, len(prepared.rows))) if self.all_reduce_max else None
            for rows in split_mini_batches(len(prepared.rows), self.optim.mini_batches, generator, n_mini):
                self._optimizer_step([prepared.rows[i] for i in rows], stats, params, prepared.on_policy)
        return stats

    def _optimizer_step(
        self, mini: list[PreparedRow], stats: EpochStats, params: dict[str, Any], on_policy: bool
    ) -> None:
        """One optimizer step on a mini-batch: micro-batches with gradient accumulation whose
        weights reproduce the full mini-batch loss (normaliser over all its rows, zero-advantage
        rows included), then grad clipping, the optimizer and the scheduler."""
        total = self._normaliser(mini)
        if total <= 0:  # the same on every rank: total is global
            return
        if self.optim.skip_zero_advantage:  # zero-advantage rows keep their share of the normaliser, nothing else
            stats.n_skipped += sum(not bool(r.advantages.any()) for r in mini)
            mini = [r for r in mini if bool(r.advantages.any())]
        micro = self._micro_batches(mini)
        trained = max(float(sum(self._units(b) for b, _ in micro)), 1.0)
        self.optimizer.zero_grad(set_to_none=True)
        n_pass = self._passes(len(micro))
        if n_pass == 0:  # the full update's gradient is exactly 0: step on zeros, as it would
            stats.sums["loss"] += 0.0
            for param in self.model.parameters():
                if param.requires_grad:
                    param.grad = torch.zeros_like(param)
        for b, no_behavior in micro:
            self._micro_step(b.to(self.device), no_behavior, total, trained, stats, params, on_policy)
        for _ in range(n_pass - len(micro)):  # FSDP: keep in step with the other ranks
            (0.0 * self._filler_logprobs(self.model).sum()).backward()
        self._clip_and_step(stats)

    def _normaliser(self, mini: Sequence[PreparedRow]) -> float:
        """The mini-batch loss's denominator over every rank (tokens or rows, see :meth:`_units`)."""
        total = torch.as_tensor(sum(self._sample_units(r.sample) for r in mini), dtype=torch.float32)
        if self.all_reduce is not None:
            total = self.all_reduce(total.to(self.device)).cpu()
        return float(total)

    def _micro_batches(self, mini: Sequence[PreparedRow]) -> list[tuple[Batch, torch.Tensor]]:
        """Micro-batches under the token budget, each with its rows' "no behaviour log-probs
        recorded" flags (those rows use the old log-probs as behaviour: no TIS)."""
        plan = plan_micro_batches([len(r.sample.token_ids) for r in mini], self.optim.micro_batch_tokens)
        return [(self._make_batch([mini[i] for i in rows]),
                 torch.tensor([not mini[i].sample.meta.get("has_behavior_logprobs", True) for i in rows]))
                for rows in plan]

    def _clip_and_step(self, stats: EpochStats) -> None:
        """Gradient clipping (FSDP: the norm over every rank's shard), optimizer and scheduler step."""
        if hasattr(self.model, "clip_grad_norm_"):
            grad_norm = self.model.clip_grad_norm_(self.optim.grad_clip)
        else:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.optim.grad_clip)
        stats.sums["grad_norm"] += float(grad_norm)
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        stats.n_opt += 1

    def _micro_step(
        self,
        b: Batch,
        no_behavior: torch.Tensor,
        total: float,
        trained: float,
        stats: EpochStats,
        params: dict[str, Any],
        on_policy: bool,
    ) -> None:
        """Forward, loss and backward of one micro-batch, weighted by its share ``units / total``
        of the mini-batch normaliser; loss metrics weighted by its share of the trained rows."""
        with autocast_context(self.device, self.precision):
            logp = token_logprobs(self.model, b.input_ids, b.attention_mask, b.loss_mask).float()
        if stats.n_opt == 0:  # the weights that sampled the batch: learner vs rollout log-probs
            rows = (~no_behavior).to(self.device)[:, None] & (b.loss_mask > 0)
            stats.gap_sum += float(((logp.detach() - b.behavior_logprobs).abs() * rows).sum())
            stats.gap_n += int(rows.sum())
        if on_policy:  # old = this very forward, detached: ratio 1, clipping inactive
            b.old_logprobs = logp.detach() * b.loss_mask
            if bool(no_behavior.any()):
                rows = no_behavior.to(self.device)[:, None]
                b.behavior_logprobs = torch.where(rows, b.old_logprobs, b.behavior_logprobs)
        loss, m = self.loss_fn(
            logp,
            b.old_logprobs,
            b.advantages,
            b.loss_mask,
            logp_behavior=b.behavior_logprobs,
            segment_ids=b.segment_ids,
            agg=self.algo.loss_agg,
            **params,
        )
        weight = float(self._units(b)) / total
        # FSDP averages gradients over ranks; multiply back so the global loss is exact
        (loss * weight * self.world_size).backward()
        stats.sums["loss"] += float(loss.detach()) * weight
        share = float(self._units(b)) / trained  # diagnostics: mean over trained rows
        for key, value in m.items():
            stats.sums[key] += float(value) * share

    def _update_metrics(self, prepared: Prepared, stats: EpochStats) -> dict[str, float]:
        """The update's metrics: loss/grad-norm/loss diagnostics averaged over optimizer steps, the
        preparation's diagnostics, counts and token-advantage statistics."""
        out = {k: v / max(stats.n_opt, 1) for k, v in stats.sums.items()}
        out.update(prepared.metrics)
        if stats.gap_n:
            # mean |log pi_learner - log pi_rollout| over the loss mask of the first optimizer step's
            # rows (weights not yet moved): ~0 at temperature 1 when ids, mask and log-probs line up
            out["update/logprob_abs_diff"] = stats.gap_sum / stats.gap_n
        samples = [r.sample for r in prepared.rows]
        out["update/optimizer_steps"] = float(stats.n_opt)
        out["update/on_policy_shortcut"] = float(prepared.on_policy)
        out["update/trajectories"] = float(len(samples))
        out["update/zero_adv_skipped"] = float(stats.n_skipped) / max(self.optim.epochs, 1)
        out["update/trainable_tokens"] = float(sum(s.n_trainable for s in samples))
        adv_tok = torch.cat([torch.zeros(0)] + [r.advantages[torch.as_tensor(r.sample.loss_mask, dtype=torch.bool)]
                                                 for r in prepared.rows])
        out["adv/token_mean"] = float(adv_tok.mean()) if adv_tok.numel() else 0.0
        out["adv/token_abs_max"] = float(adv_tok.abs().max()) if adv_tok.numel() else 0.0
        # after return-to-go and the runtime penalty: nonzero even when every outcome advantage is 0
        out["adv/token_nonzero_frac"] = float((adv_tok != 0).float().mean()) if adv_tok.numel() else 0.0
        return out

    def _units(self, batch: Batch) -> torch.Tensor:
        """Normalisation units of a (micro-)batch for the configured reduction."""
        if self.algo.loss_agg == "token-mean":
            return batch.loss_mask.sum()
        return (batch.loss_mask.sum(dim=1) > 0).sum().to(torch.float32)

    def _sample_units(self, sample: TrainSample) -> float:
        """``_units`` of one sample (the loss mask after collation is the sample's own)."""
        n = sample.n_trainable
        return float(n) if self.algo.loss_agg == "token-mean" else float(n > 0)

    def _make_batch(self, items: Sequence[PreparedRow]) -> Batch:
        batch = collate([r.sample for r in items], self.pad_id)
        t = batch.input_ids.shape[1]
        old = torch.zeros((len(items), t))
        adv = torch.zeros((len(items), t))
        behavior = batch.behavior_logprobs.clone()
        for j, r in enumerate(items):
            n = len(r.sample.token_ids)
            adv[j, :n] = r.advantages
            if r.old is None:  # on-policy shortcut: filled from the training forward itself
                continue
            old[j, :n] = r.old
            if not r.sample.meta.get("has_behavior_logprobs", True):
                behavior[j, :n] = r.old  # no rollout log-probs recorded: no TIS correction
        batch.old_logprobs = old * batch.loss_mask
        batch.advantages = adv * batch.loss_mask
        batch.behavior_logprobs = behavior * batch.loss_mask
        return batch


def sample_from_trajectory(traj: Trajectory, advantage: float, reward: float = math.nan) -> TrainSample:
    """A :class:`TrainSample` from a :class:`swetrain.agent.trajectory.Trajectory`.

    Loss mask = the assistant mask (ids generated in this trajectory; the prompt, copied failure
    context and observations are 0); invalid tokens = tokens of flagged assistant turns. A
    trajectory whose behaviour log-probs are all exactly 0 on generated ids (a scripted policy)
    is marked as having none, so no importance correction is applied to it.
    """
    traj.check()
    mask = [int(m) for m in traj.assistant_mask]
    behavior = [float(x) for x in traj.behavior_logprobs]
    has_behavior = any(b != 0.0 for b, m in zip(behavior, mask) if m)
    return TrainSample(
        token_ids=list(traj.token_ids),
        loss_mask=mask,
        segment_ids=[int(x) for x in traj.segment_ids],
        behavior_logprobs=behavior,
        invalid=list(traj.invalid_token_mask),
        advantage=advantage,
        reward=reward,
        group=traj.instance_id,
        meta={
            "has_behavior_logprobs": has_behavior,
            "chain": traj.chain,
            "attempt": traj.attempt,
            "resolved": bool(traj.resolved),
        },
    )


def has_active_dropout(model: torch.nn.Module) -> bool:
    """True when a training-mode forward of ``model`` may drop activations: an ``nn.Dropout``
    with ``p > 0``, or a (transformers) config whose ``*dropout*`` fields hold a value > 0
    (attention dropout is applied functionally, without a module)."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd) and module.p > 0:
            return True
        config = getattr(module, "config", None)
        if config is None:
            continue
        values = config.to_dict() if hasattr(config, "to_dict") else vars(config)
        for key, value in values.items():
            if "dropout" in key and isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return True
    return False


def _zeros(samples: Sequence[TrainSample]) -> list[torch.Tensor]:
    """Zero log-probs ``[len(sample)]`` per sample (for a loss or advantage that does not read them)."""
    return [torch.zeros(len(s.token_ids)) for s in samples]


def _is_nan(value: float | list[float]) -> bool:
    return isinstance(value, float) and math.isnan(value)


def cosine_with_warmup(optimizer: torch.optim.Optimizer, warmup: int, total: int, min_ratio: float):
    """LambdaLR: linear warmup over ``warmup`` steps, then cosine decay to ``min_ratio`` at ``total``."""

    def factor(step: int) -> float:
        if warmup > 0 and step < warmup:
            return (step + 1) / warmup
        span = max(1, total - warmup)
        progress = min(1.0, max(0.0, (step - warmup) / span))
        return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
