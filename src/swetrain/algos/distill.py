"""Multi-teacher on-policy distillation (MOPD) with reward extrapolation (ExOPD), seed 000.

Per sampled token of a student rollout routed to teacher ``k`` (eq. 25)::

    A_t = (log π_k(y_t) − log q(y_t)) + (λ_k − 1) · g(log π_k(y_t) − log π_ref(y_t))
    Ã_t = clip(A_t, −c_a, c_a)

``q`` is the behavior (rollout) policy, ``π_ref`` the student's initial policy, ``g`` the ReLU gate
(identity when disabled). The loss (eq. 26) is a vanilla policy gradient ``−Σ sg(Ã_t) log π_θ(y_t)``
with the turn-aware "seq-mean-segment-sum" reduction: no ratio, no proximal mask, no IS weight.
Its registry spec says so to the trainer: it needs the frozen reference and route teachers, and
scores no old log-probs. Routing (which teacher scores which trajectory) is the trainer's job: pass the routed teacher's
log-probs row by row.
"""

from __future__ import annotations

import torch

from ._tensor import Tensorish, as_float, check_same_shape
from .losses import TokenBatch, agg_loss, register_policy_loss


def mopd_advantages(
    logp_teacher: Tensorish,
    logp_behavior: Tensorish,
    logp_ref: Tensorish,
    lam: float = 1.25,
    gate: bool = True,
    clip: float | None = 5.0,
) -> torch.Tensor:
    """MOPD/ExOPD routed token advantage (seed 000, eq. 25, ReLU-gated extrapolation).

    ``A = (logp_teacher − logp_behavior) + (lam − 1) · g(logp_teacher − logp_ref)``, ``g = ReLU``
    when ``gate`` else identity, then clipped to ``[−clip, clip]`` (``clip=None``: no clipping).
    ``lam = 1`` is plain on-policy distillation. Masking is applied by the loss.

    Shapes: all inputs ``[B, T]`` (any equal shapes work) -> ``Tensor[B, T]``, detached.
    """
    if clip is not None and not clip > 0:
        raise ValueError(f"clip: must be > 0 or None, got {clip}")
    lt = as_float(logp_teacher, "logp_teacher").detach()
    lb = as_float(logp_behavior, "logp_behavior", like=lt).to(lt.dtype).detach()
    lr = as_float(logp_ref, "logp_ref", like=lt).to(lt.dtype).detach()
    check_same_shape(lt, "logp_teacher", logp_behavior=lb, logp_ref=lr)
    gap = lt - lr
    extra = torch.relu(gap) if gate else gap
    adv = (lt - lb) + (float(lam) - 1.0) * extra
    if clip is not None:
        adv = adv.clamp(-clip, clip)
    return adv


def mopd_metrics(
    logp_teacher: Tensorish,
    logp_behavior: Tensorish,
    logp_ref: Tensorish,
    mask: Tensorish,
) -> dict[str, float]:
    """Diagnostics over valid tokens: student–teacher K1 (``log q − log π_k``, the reverse-KL
    estimate that the paper tracks falling during MOPD), mean teacher–reference gap and the share
    of tokens the ReLU gate keeps."""
    lt = as_float(logp_teacher, "logp_teacher").detach()
    tb = TokenBatch(
        torch.zeros_like(lt), None, torch.zeros_like(lt), mask, logp_behavior, require_old=False
    )
    lr = tb._aux(logp_ref, "logp_ref")
    lt = tb._aux(lt, "logp_teacher")
    return {
        "mopd/student_teacher_k1": tb.mean(tb.logp_behavior - lt),
        "mopd/teacher_ref_gap": tb.mean(lt - lr),
        "mopd/gate_open_frac": tb.mean((lt > lr).to(lt.dtype)),
    }


# its knobs (lam, gate, clip, teachers) are the ``algo.mopd`` section, read by the advantages
@register_policy_loss("mopd", algo_keys=True, needs_reference=True, needs_teachers=True, scores_old_logprobs=False)
def mopd_loss(
    logp: torch.Tensor,
    logp_old: Tensorish | None,
    advantages: Tensorish,
    mask: Tensorish,
    *,
    logp_behavior: Tensorish | None = None,
    segment_ids: Tensorish | None = None,
    agg: str | None = None,
    loss_norm: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """MOPD vanilla policy-gradient loss (seed 000, eq. 26): token loss ``−sg(Ã_t) · logp_t``.

    Default reduction ``"seq-mean-segment-sum"`` (sum within each assistant turn, mean over turns,
    mean over valid trajectories). ``logp_old`` and ``logp_behavior`` are accepted for the uniform
    policy-loss signature and not used (the advantage already contains ``log q``).

    Shapes: ``logp, mask, segment_ids[B, T]``, ``advantages[B, T]`` (from :func:`mopd_advantages`)
    -> ``(loss[], metrics)``.
    """
    tb = TokenBatch(logp, None, advantages, mask, require_old=False)
    token_loss = -tb.adv * tb.logp
    loss = agg_loss(token_loss, tb.mask, agg or "seq-mean-segment-sum", segment_ids, loss_norm)
    return loss, {
        "pg/n_tokens": float(tb.n_valid),
        "pg/adv_mean": tb.mean(tb.adv),
        "pg/adv_pos_frac": tb.mean((tb.adv > 0).to(tb.adv.dtype)),
    }
