"""Loss aggregation, policy losses (FC-SWE clipped, Agentic-miniRL) and the runtime penalty.

Every policy loss has the signature::

    fn(logp, logp_old, advantages, mask, *, logp_behavior=None, segment_ids=None, agg=None,
       **params) -> (loss: 0-dim Tensor, metrics: dict[str, float])

* ``logp[B, T]``: log π_θ of the sampled tokens (differentiated).
* ``logp_old[B, T]``: log π_θ⁻ of the pre-update policy recomputed by the trainer (detached).
* ``advantages``: ``[B, T]`` per token or ``[B]`` per trajectory (broadcast to valid tokens).
* ``mask[B, T]``: valid (policy-generated) tokens; everything else contributes nothing, not even
  NaN: masked positions are replaced before any arithmetic.
* ``logp_behavior[B, T]``: log μ_b recorded by the rollout engine (used by "minirl").
* ``segment_ids[B, T]``: assistant-turn ids for the "seq-mean-segment-sum" reduction.
* ``agg``: reduction mode for :func:`agg_loss`; ``None`` = the loss's own default.
* ``loss_norm``: optional denominator override for gradient accumulation (see :func:`agg_norm`).
* ``**params``: the loss's own parameters, validated by its parameter model.

Metrics are computed over valid tokens only and returned as Python floats.

A loss is registered with one decorator that records its :class:`PolicyLossSpec` (function,
parameter model, capability flags)::

    class ScaledParams(LossParams):
        scale: float = Field(default=1.0, gt=0)

    @register_policy_loss("scaled-pg", params=ScaledParams, scores_old_logprobs=False)
    def scaled_pg(logp, logp_old, advantages, mask, *, scale=1.0, **kw): ...

The trainer reads only the spec (``get_loss_spec``), never the loss's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from ._tensor import Tensorish, as_bool, as_float, check_ndim, check_same_shape
from .registry import Registry

AGG_MODES: tuple[str, ...] = (
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-mean",
    "seq-mean-segment-sum",
)
LOG_RATIO_CLAMP = 20.0  # keeps exp(logp - logp_old) finite for wildly off-policy tokens


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------
def segment_counts(mask: torch.Tensor, segment_ids: Tensorish | None = None) -> torch.Tensor:
    """Number of assistant turns per row, ``[B]`` (long).

    With ``segment_ids[B, T]``: the number of distinct ids among the row's valid tokens. Without:
    the number of maximal contiguous runs of valid tokens (each run = one assistant turn).
    """
    B, T = mask.shape
    if T == 0:
        return torch.zeros(B, dtype=torch.long, device=mask.device)
    if segment_ids is None:
        starts = mask.clone()
        starts[:, 1:] = mask[:, 1:] & ~mask[:, :-1]
        return starts.sum(dim=1)
    seg = torch.as_tensor(segment_ids, device=mask.device)
    if seg.shape != mask.shape:
        raise ValueError(f"segment_ids: shape {tuple(seg.shape)} does not match mask {tuple(mask.shape)}")
    if torch.is_floating_point(seg) or seg.dtype == torch.bool:
        raise ValueError("segment_ids: must be an integer tensor")
    seg = seg.long()
    if not mask.any():
        return torch.zeros(B, dtype=torch.long, device=mask.device)
    rows = torch.arange(B, device=mask.device).unsqueeze(1).expand(B, T)[mask]
    vals = seg[mask]
    lo = vals.min()
    span = vals.max() - lo + 1
    keys = torch.unique(rows * span + (vals - lo))
    return torch.bincount(keys // span, minlength=B)


def agg_loss(
    loss_mat: torch.Tensor,
    mask: Tensorish,
    mode: str = "token-mean",
    segment_ids: Tensorish | None = None,
    norm: float | None = None,
) -> torch.Tensor:
    """Reduce a token-loss matrix to a scalar.

    Args:
        loss_mat: ``[B, T]`` per-token losses (masked entries may hold anything, even NaN).
        mask: ``[B, T]`` valid-token mask.
        mode:
            * ``"token-mean"``: ``Σ_{i,t} m·ℓ / Σ_{i,t} m`` (verl).
            * ``"seq-mean-token-sum"``: per row ``Σ_t m·ℓ``, averaged over rows (verl).
            * ``"seq-mean-token-mean"``: per row ``Σ_t m·ℓ / Σ_t m``, averaged over rows (verl).
            * ``"seq-mean-segment-sum"`` (seed 000, Agentic-miniRL loss; MOPD eq. 26): sum token
              losses within each assistant turn ``s ∈ S_i``, average turns within row ``i``
              (``1/|S_i|``), then average over the ``B_valid`` rows. Turns come from
              ``segment_ids`` (one id per turn) or, when omitted, from contiguous runs of valid
              tokens.
          The ``seq-mean-*`` modes average over rows that have at least one valid token
          (``B_valid``); verl divides by all rows, which lets empty rows dilute the loss.
        segment_ids: ``[B, T]`` integer turn ids (only for ``seq-mean-segment-sum``).
        norm: overrides the final denominator (valid tokens for ``token-mean``, valid rows for
            ``seq-mean-*``). With gradient accumulation, pass the count over the WHOLE batch to
            every micro-batch: the micro-batch losses then sum to the full-batch loss (see
            :func:`agg_norm`).

    Returns:
        0-dim tensor; exactly 0 (still attached to ``loss_mat``'s graph) when nothing is valid.
    """
    if mode not in AGG_MODES:
        raise ValueError(f"mode: unknown aggregation {mode!r}; expected one of {AGG_MODES}")
    if not isinstance(loss_mat, torch.Tensor) or not torch.is_floating_point(loss_mat):
        raise ValueError("loss_mat: expected a floating torch.Tensor")
    check_ndim(loss_mat, 2, "loss_mat", "[B, T]")
    m = as_bool(mask, "mask", like=loss_mat)
    check_same_shape(loss_mat, "loss_mat", mask=m)
    zero = torch.zeros((), dtype=loss_mat.dtype, device=loss_mat.device)
    lm = torch.where(m, loss_mat, zero)
    n_tok = m.sum(dim=1)  # [B]
    if norm is not None and not norm > 0:
        raise ValueError(f"norm: must be > 0, got {norm!r}")
    if mode == "token-mean":
        return lm.sum() / (norm if norm is not None else n_tok.sum().clamp(min=1))
    row_sum = lm.sum(dim=1)
    valid_rows = n_tok > 0
    if mode == "seq-mean-token-sum":
        per_row = row_sum
    elif mode == "seq-mean-token-mean":
        per_row = row_sum / n_tok.clamp(min=1)
    else:
        per_row = row_sum / segment_counts(m, segment_ids).clamp(min=1)
    denom = norm if norm is not None else valid_rows.sum().clamp(min=1)
    return torch.where(valid_rows, per_row, zero).sum() / denom


def agg_norm(mask: Tensorish, mode: str) -> int:
    """The denominator :func:`agg_loss` would use for ``mask[B, T]`` (valid tokens or rows).

    Compute it once over a full batch and pass it as ``norm`` (policy losses: ``loss_norm``) to
    each micro-batch so that summed micro-batch losses equal the full-batch loss.
    """
    if mode not in AGG_MODES:
        raise ValueError(f"mode: unknown aggregation {mode!r}; expected one of {AGG_MODES}")
    m = as_bool(mask, "mask")
    check_ndim(m, 2, "mask", "[B, T]")
    if mode == "token-mean":
        return max(int(m.sum()), 1)
    return max(int(m.any(dim=1).sum()), 1)


# --------------------------------------------------------------------------------------------
# Registry: one spec per loss
# --------------------------------------------------------------------------------------------
PolicyLossFn = Callable[..., tuple[torch.Tensor, dict[str, float]]]


class LossParams(BaseModel):
    """Base of a policy loss's parameter model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class PolicyLossSpec:
    """Everything the trainer needs to know about a registered policy loss.

    * ``fn``: the loss (signature in the module docstring).
    * ``params``: pydantic model of its keyword parameters, or None (no parameters).
    * ``algo_keys``: the parameters are the built-in ``algo`` keys named like the model's fields
      (``clipped``: ``algo.clip_low``/``algo.clip_high``; the recipes use them); otherwise they are
      ``algo.params``. ``mopd`` sets it with no model: its knobs are the ``algo.mopd`` section,
      read by the distillation advantages.
    * ``needs_reference``: the trainer keeps a frozen copy of the initial policy for it.
    * ``needs_teachers``: its token advantages are the routed teachers' distillation advantages
      (MOPD/ExOPD, seed 000 eq. 25) instead of outcome advantages; the trainer loads one frozen
      teacher per route.
    * ``scores_old_logprobs``: it reads ``logp_old`` (the pre-update policy's log-probs), so the
      trainer scores them (or, exactly on-policy, takes them from the training forward). False:
      the trainer passes zeros and runs no scoring forward for the loss.
    """

    name: str
    fn: PolicyLossFn
    params: type[BaseModel] | None = None
    algo_keys: bool = False
    needs_reference: bool = False
    needs_teachers: bool = False
    scores_old_logprobs: bool = True

    def __post_init__(self) -> None:
        if self.needs_teachers and not self.needs_reference:
            raise ValueError(f"policy loss {self.name!r}: needs_teachers needs needs_reference=True "
                             "(the distillation advantages, eq. 25, read the frozen reference)")

    @property
    def takes_algo_params(self) -> bool:
        """Whether ``algo.params`` holds this loss's parameters."""
        return self.params is not None and not self.algo_keys

    def builtin_keys(self) -> tuple[str, ...] | None:
        """The ``algo`` keys that are this loss's parameters (None: they are ``algo.params``)."""
        if not self.algo_keys:
            return None
        return tuple(self.params.model_fields) if self.params is not None else ()

    def validate_params(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """``raw`` validated by the parameter model (pydantic ``ValidationError`` otherwise)."""
        if self.params is None:
            if raw:
                raise ValueError(f"algo.params: policy loss {self.name!r} has no parameter model (got {sorted(raw)})")
            return {}
        return self.params.model_validate(dict(raw)).model_dump()

    def params_of(self, algo: Any) -> dict[str, Any]:
        """Keyword arguments of the loss for an ``algo`` config section, validated."""
        keys = self.builtin_keys()
        given = getattr(algo, "params", None) or {}
        if keys is None:
            return self.validate_params(given)
        if given:
            raise ValueError(f"algo.params: policy loss {self.name!r} has no parameter model for algo.params "
                             f"(its parameters are the algo keys {', '.join(keys) or '(none)'}; got {sorted(given)})")
        return self.validate_params({k: getattr(algo, k) for k in keys})


POLICY_LOSSES: Registry[PolicyLossSpec] = Registry("policy loss")


def register_policy_loss(
    name: str,
    *,
    override: bool = False,
    params: type[BaseModel] | None = None,
    algo_keys: bool = False,
    needs_reference: bool = False,
    needs_teachers: bool = False,
    scores_old_logprobs: bool = True,
) -> Callable[[PolicyLossFn], PolicyLossFn]:
    """Decorator registering a policy loss under ``name`` (verl style) with its parameter model and
    capability flags (see :class:`PolicyLossSpec`); returns the function unchanged."""

    def deco(fn: PolicyLossFn) -> PolicyLossFn:
        if not callable(fn):
            raise ValueError(f"policy loss {name!r}: registered object must be callable")
        spec = PolicyLossSpec(name, fn, params, algo_keys, needs_reference, needs_teachers, scores_old_logprobs)
        POLICY_LOSSES.add(name, spec, override=override)
        return fn

    return deco


def get_loss_spec(name: str) -> PolicyLossSpec:
    """The spec of the policy loss registered as ``name``; ``ValueError`` lists the known names."""
    return POLICY_LOSSES.get(name)


def get_policy_loss(name: str) -> PolicyLossFn:
    """Return the policy loss registered as ``name``; ``ValueError`` lists the known names."""
    return POLICY_LOSSES.get(name).fn


def list_policy_losses() -> list[str]:
    return POLICY_LOSSES.names()


def set_loss_params(name: str, model: type[BaseModel] | None) -> None:
    """Attach (None: detach) the ``algo.params`` model of the registered loss ``name`` (prefer
    ``register_policy_loss(name, params=...)``); losses on built-in ``algo`` keys refuse one."""
    spec = get_loss_spec(name)
    if spec.algo_keys:
        raise ValueError(f"policy loss {name!r} takes the built-in algo keys; it cannot register a parameter model")
    POLICY_LOSSES.add(name, replace(spec, params=model), override=True)


class LossParamModels(MutableMapping[str, type[BaseModel]]):
    """Live view ``loss name -> algo.params model`` of the registry (the mapping
    ``swetrain.train.config.LOSS_PARAMS`` has always offered); writes go to the specs."""

    def __getitem__(self, name: str) -> type[BaseModel]:
        spec = get_loss_spec(name) if name in POLICY_LOSSES else None
        if spec is None or not spec.takes_algo_params:
            raise KeyError(name)
        return spec.params  # type: ignore[return-value]

    def __setitem__(self, name: str, model: type[BaseModel]) -> None:
        set_loss_params(name, model)

    def __delitem__(self, name: str) -> None:
        self[name]  # KeyError when there is none
        set_loss_params(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, spec in POLICY_LOSSES.items() if spec.takes_algo_params])

    def __len__(self) -> int:
        return len(list(iter(self)))


def builtin_loss_keys() -> dict[str, tuple[str, ...]]:
    """``loss name -> algo keys`` of the losses whose parameters are built-in ``algo`` keys."""
    return {name: keys for name, spec in POLICY_LOSSES.items() if (keys := spec.builtin_keys()) is not None}


# --------------------------------------------------------------------------------------------
# Shared preparation
# --------------------------------------------------------------------------------------------
class TokenBatch:
    """Validated, device-aligned inputs of a policy loss (all ``[B, T]``).

    ``adv`` and ``logp_old`` are detached and set to 0 on masked positions; ``log_ratio`` is
    ``logp − logp_old`` clamped to ±20 and 0 on masked positions (differentiable through logp).
    """

    def __init__(
        self,
        logp: torch.Tensor,
        logp_old: Tensorish | None,
        advantages: Tensorish,
        mask: Tensorish,
        logp_behavior: Tensorish | None = None,
        require_old: bool = True,
    ) -> None:
        if not isinstance(logp, torch.Tensor) or not torch.is_floating_point(logp):
            raise ValueError("logp: expected a floating torch.Tensor (the differentiated log-probs)")
        check_ndim(logp, 2, "logp", "[B, T]")
        self.mask = as_bool(mask, "mask", like=logp)
        check_same_shape(logp, "logp", mask=self.mask)
        self.zero = torch.zeros((), dtype=logp.dtype, device=logp.device)
        m = self.mask
        a = as_float(advantages, "advantages", like=logp).to(logp.dtype)
        if a.dim() == 1:
            if a.shape[0] != logp.shape[0]:
                raise ValueError(f"advantages: {a.shape[0]} rows but logp has {logp.shape[0]}")
            a = a.unsqueeze(1).expand_as(logp)
        check_same_shape(logp, "logp", advantages=a)
        a = torch.where(m, a.detach(), self.zero)
        if not torch.isfinite(a).all():
            raise ValueError("advantages: non-finite (NaN/inf) value on a valid token")
        self.adv = a
        self.logp = torch.where(m, logp, self.zero)
        if logp_old is not None:
            lo = self._aux(logp_old, "logp_old")
            self.logp_old = lo
            self.log_ratio = torch.where(
                m, (logp - lo).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP), self.zero
            )
        elif require_old:
            raise ValueError("logp_old: required (pass logp.detach() for a purely on-policy step)")
        self.logp_behavior = None if logp_behavior is None else self._aux(logp_behavior, "logp_behavior")
        self.n_valid = int(m.sum())

    def _aux(self, x: Tensorish, name: str) -> torch.Tensor:
        if x is None:
            raise ValueError(f"{name}: required (got None)")
        t = as_float(x, name, like=self.zero).to(self.zero.dtype)
        check_same_shape(self.mask, "mask", **{name: t})
        t = torch.where(self.mask, t.detach(), self.zero)
        if not torch.isfinite(t).all():
            raise ValueError(f"{name}: non-finite (NaN/inf) value on a valid token")
        return t

    def mean(self, x: torch.Tensor) -> float:
        """Mean of ``x`` over valid tokens (0.0 if none)."""
        if self.n_valid == 0:
            return 0.0
        return float(torch.where(self.mask, x.detach().to(self.zero.dtype), self.zero).sum() / self.n_valid)


def _metrics(tb: TokenBatch, ratio: torch.Tensor | None, extra: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {"pg/n_tokens": float(tb.n_valid), "pg/adv_mean": tb.mean(tb.adv)}
    if ratio is not None:
        out["pg/ratio_mean"] = tb.mean(ratio)
        out["pg/approx_kl"] = tb.mean(-tb.log_ratio)  # K1 of π_θ⁻ vs π_θ on sampled tokens
    out.update(extra)
    return out


# --------------------------------------------------------------------------------------------
# Policy losses
# --------------------------------------------------------------------------------------------
class ClippedParams(LossParams):
    """``clipped``'s parameters: ``algo.clip_low`` / ``algo.clip_high``."""

    clip_low: float = Field(default=0.2, ge=0.0, lt=1.0)
    clip_high: float = Field(default=0.2, ge=0.0)


@register_policy_loss("clipped", params=ClippedParams, algo_keys=True)
def clipped_policy_loss(
    logp: torch.Tensor,
    logp_old: Tensorish,
    advantages: Tensorish,
    mask: Tensorish,
    *,
    logp_behavior: Tensorish | None = None,
    segment_ids: Tensorish | None = None,
    agg: str | None = None,
    loss_norm: float | None = None,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
) -> tuple[torch.Tensor, dict[str, float]]:
    """FC-SWE token-normalised clipped surrogate (PPO/GRPO form).

    ``ℓ_t = −min(ρ_t A_t, clip(ρ_t, 1 − clip_low, 1 + clip_high) A_t)``,
    ``ρ_t = exp(logp_t − logp_old_t)``; default reduction ``"token-mean"``.
    ``logp_behavior`` is accepted for a uniform call signature and not used.

    Shapes: ``logp, logp_old, mask[B, T]``, ``advantages[B, T] or [B]`` -> ``(loss[], metrics)``.
    Metrics: ``pg/clip_frac`` (share of valid tokens where the clipped term is the active one),
    ``pg/ratio_mean``, ``pg/approx_kl``, ``pg/adv_mean``, ``pg/n_tokens``.
    """
    if not (0 <= clip_low < 1) or clip_high < 0:
        raise ValueError(f"clip_low/clip_high: need 0 <= clip_low < 1 and clip_high >= 0, got {clip_low}, {clip_high}")
    tb = TokenBatch(logp, logp_old, advantages, mask)
    ratio = torch.exp(tb.log_ratio)
    a = tb.adv
    pg1 = -a * ratio
    pg2 = -a * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    token_loss = torch.maximum(pg1, pg2)
    loss = agg_loss(token_loss, tb.mask, agg or "token-mean", segment_ids, loss_norm)
    clipped = (pg2 > pg1).to(logp.dtype)
    return loss, _metrics(tb, ratio, {"pg/clip_frac": tb.mean(clipped)})


class MiniRLParams(LossParams):
    """``minirl``'s parameters: ``algo.tis_cap`` / ``algo.eps_low`` / ``algo.eps_high``."""

    tis_cap: float = Field(default=2.0, gt=0.0)
    eps_low: float = Field(default=0.2, ge=0.0, lt=1.0)
    eps_high: float = Field(default=0.28, ge=0.0)


@register_policy_loss("minirl", params=MiniRLParams, algo_keys=True)
def minirl_policy_loss(
    logp: torch.Tensor,
    logp_old: Tensorish,
    advantages: Tensorish,
    mask: Tensorish,
    *,
    logp_behavior: Tensorish | None = None,
    segment_ids: Tensorish | None = None,
    agg: str | None = None,
    loss_norm: float | None = None,
    eps_low: float = 0.2,
    eps_high: float = 0.28,
    tis_cap: float = 2.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Agentic-miniRL loss (seed 000: truncated IS + sign-aware proximal mask + turn-aware sum).

    * ``w_t = min(exp(logp_old_t − logp_behavior_t), tis_cap)`` (truncated importance weight for
      the rollout/trainer mismatch; ``w = 1`` when ``logp_behavior`` is None), detached.
    * ``ρ_t = exp(logp_t − logp_old_t)`` (proximal ratio).
    * ``M_t = 0`` if ``(A_t > 0 and ρ_t > 1 + eps_high)`` or ``(A_t < 0 and ρ_t < 1 − eps_low)``,
      else 1; detached.
    * token loss ``ℓ_t = −M_t · w_t · A_t · ρ_t``; default reduction ``"seq-mean-segment-sum"``.

    Shapes: ``logp, logp_old, logp_behavior, mask, segment_ids[B, T]``, ``advantages[B, T] or [B]``
    -> ``(loss[], metrics)``. Metrics: ``pg/mask_frac`` (share of valid tokens masked out),
    ``pg/is_weight_mean``, ``pg/is_capped_frac``, ``pg/ratio_mean``, ``pg/approx_kl``, ...
    """
    if not (0 <= eps_low < 1) or eps_high < 0:
        raise ValueError(f"eps_low/eps_high: need 0 <= eps_low < 1 and eps_high >= 0, got {eps_low}, {eps_high}")
    if not tis_cap > 0:
        raise ValueError(f"tis_cap: must be > 0, got {tis_cap}")
    tb = TokenBatch(logp, logp_old, advantages, mask, logp_behavior)
    ratio = torch.exp(tb.log_ratio)
    a = tb.adv
    if tb.logp_behavior is None:
        w = torch.ones_like(a)
        capped = torch.zeros_like(a)
    else:
        raw_lw = (tb.logp_old - tb.logp_behavior).clamp(max=LOG_RATIO_CLAMP)
        raw_w = torch.exp(raw_lw)
        w = raw_w.clamp(max=tis_cap)
        capped = (raw_w > tis_cap).to(a.dtype)
    r_d = ratio.detach()
    drop = ((a > 0) & (r_d > 1.0 + eps_high)) | ((a < 0) & (r_d < 1.0 - eps_low))
    keep = (~drop).to(a.dtype)
    token_loss = -(keep * w).detach() * a * ratio
    loss = agg_loss(token_loss, tb.mask, agg or "seq-mean-segment-sum", segment_ids, loss_norm)
    return loss, _metrics(
        tb,
        ratio,
        {
            "pg/mask_frac": tb.mean(drop.to(a.dtype)),
            "pg/is_weight_mean": tb.mean(w),
            "pg/is_capped_frac": tb.mean(capped),
        },
    )


# --------------------------------------------------------------------------------------------
# Runtime penalty (FC-SWE)
# --------------------------------------------------------------------------------------------
INVALID_ADVANTAGE = -5.0


def apply_invalid_override(
    advantages: Tensorish,
    invalid_token_mask: Tensorish,
    value: float = INVALID_ADVANTAGE,
) -> torch.Tensor:
    """FC-SWE runtime penalty: overwrite the advantage of every token of a flagged message.

    Tokens of assistant messages flagged as an invalid tool call or malformed thinking get
    advantage ``value`` (the paper uses −5) regardless of the trajectory's reward; all other
    tokens keep theirs. Returns a new tensor (input untouched, no autograd history).

    Shapes: ``advantages[B, T]`` (or ``[B]``, broadcast along T), ``invalid_token_mask[B, T]``
    -> ``Tensor[B, T]``. Build the token mask from per-message flags with
    :func:`segment_flags_to_token_mask`.
    """
    inv = as_bool(invalid_token_mask, "invalid_token_mask")
    check_ndim(inv, 2, "invalid_token_mask", "[B, T]")
    a = as_float(advantages, "advantages", like=inv)
    if a.dim() == 1:
        if a.shape[0] != inv.shape[0]:
            raise ValueError(f"advantages: {a.shape[0]} rows but invalid_token_mask has {inv.shape[0]}")
        a = a.unsqueeze(1).expand(inv.shape)
    check_same_shape(inv, "invalid_token_mask", advantages=a)
    inv = inv.to(a.device)
    return torch.where(inv, torch.full((), float(value), dtype=a.dtype, device=a.device), a.detach())


def segment_flags_to_token_mask(segment_ids: Tensorish, segment_flags: Tensorish) -> torch.Tensor:
    """Expand per-message flags to tokens.

    Args:
        segment_ids: ``[B, T]`` integer id of the assistant message each token belongs to
            (``0..S-1``), negative for tokens outside assistant messages.
        segment_flags: ``[B, S]`` bool, True for flagged messages (invalid call, malformed thinking).

    Returns:
        ``BoolTensor[B, T]``: True on every token of a flagged message.
    """
    seg = torch.as_tensor(segment_ids)
    check_ndim(seg, 2, "segment_ids", "[B, T]")
    if torch.is_floating_point(seg) or seg.dtype == torch.bool:
        raise ValueError("segment_ids: must be an integer tensor")
    flags = as_bool(segment_flags, "segment_flags", like=seg)
    check_ndim(flags, 2, "segment_flags", "[B, S]")
    if flags.shape[0] != seg.shape[0]:
        raise ValueError(f"segment_flags: {flags.shape[0]} rows but segment_ids has {seg.shape[0]}")
    seg = seg.long()
    inside = seg >= 0
    if inside.any() and int(seg.max()) >= flags.shape[1]:
        raise ValueError(
            f"segment_ids: id {int(seg.max())} has no flag (segment_flags has {flags.shape[1]} columns)"
        )
    if flags.shape[1] == 0:
        return torch.zeros_like(inside)
    return flags.gather(1, seg.clamp(min=0)) & inside
