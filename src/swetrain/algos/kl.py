"""K1 reference penalty in the reward path and returns-to-go (seed 000, Agentic-miniRL eq. 14).

Order of operations (eq. 14): expand the (RLOO-centred) terminal reward onto the last valid token,
subtract ``beta · K1`` on every valid assistant token, then take a reverse discounted cumulative
sum over the valid tokens. K1 is computed from the pre-update policy ``π_θ⁻`` (``logp_old``) and
the reference without gradient. K3 is provided only as a diagnostic.
"""

from __future__ import annotations

import torch

from ._tensor import Tensorish, as_bool, as_float, check_ndim, check_same_shape


def _bt(x: Tensorish, name: str, like: torch.Tensor | None = None) -> torch.Tensor:
    t = as_float(x, name, like=like)
    check_ndim(t, 2, name, "[B, T]")
    return t


def k1(logp: Tensorish, logp_ref: Tensorish) -> torch.Tensor:
    """Sampled K1 estimator ``d = log π(y_t) − log π_ref(y_t)`` per token (no masking), ``[B, T]``."""
    a = as_float(logp, "logp")
    b = as_float(logp_ref, "logp_ref", like=a)
    check_same_shape(a, "logp", logp_ref=b)
    return (a - b).detach()


def k3(logp: Tensorish, logp_ref: Tensorish) -> torch.Tensor:
    """Non-negative K3 estimator ``exp(−d) − 1 + d`` with ``d`` = K1, per token ``[B, T]``.

    Diagnostic only (seed 000: differentiating K3 as a loss gives a biased gradient).
    """
    d = k1(logp, logp_ref)
    return torch.expm1(-d) + d


def kl_metrics(logp: Tensorish, logp_ref: Tensorish, mask: Tensorish) -> dict[str, float]:
    """Mean K1 and K3 over valid tokens (``mask[B, T]``); 0.0 when no token is valid."""
    d = k1(logp, logp_ref)
    m = as_bool(mask, "mask", like=d)
    check_same_shape(d, "logp", mask=m)
    n = int(m.sum())
    if n == 0:
        return {"kl/k1_mean": 0.0, "kl/k3_mean": 0.0}
    k3v = torch.expm1(-d) + d
    return {"kl/k1_mean": float(d[m].mean()), "kl/k3_mean": float(k3v[m].mean())}


def last_valid_index(mask: torch.Tensor) -> torch.Tensor:
    """Index of the last True per row of ``mask[B, T]`` (``-1`` for rows without valid tokens)."""
    B, T = mask.shape
    if T == 0:
        return torch.full((B,), -1, dtype=torch.long, device=mask.device)
    pos = torch.arange(T, device=mask.device).expand(B, T)
    return torch.where(mask, pos, torch.full_like(pos, -1)).max(dim=1).values


def token_rewards_with_k1(
    terminal: Tensorish,
    logp_old: Tensorish,
    logp_ref: Tensorish,
    mask: Tensorish,
    beta: float,
) -> torch.Tensor:
    """Token rewards with the K1 penalty in the reward path (seed 000, eq. 14).

    ``r_{i,t} = −beta · (log π_θ⁻ − log π_ref)(y_{i,t}) + [t = T_i] · R̃_i`` on valid tokens and 0 on
    masked (prompt, tool-observation, padding) tokens, where ``T_i`` is the last valid token of
    row ``i`` and ``R̃_i = terminal[i]``.

    Args:
        terminal: ``[B]`` per-trajectory terminal reward (typically the RLOO advantage). A NaN
            terminal (⊥, inactive trajectory) makes the whole row 0.
        logp_old: ``[B, T]`` log-probs of the sampled tokens under ``π_θ⁻`` (detached here).
        logp_ref: ``[B, T]`` log-probs under the frozen reference (detached here).
        mask: ``[B, T]`` valid assistant-token mask. Rows without valid tokens stay 0.
        beta: K1 coefficient (``>= 0``).

    Returns:
        ``Tensor[B, T]`` token rewards (no autograd history).
    """
    if not isinstance(beta, (int, float)) or beta < 0 or beta != beta:
        raise ValueError(f"beta: must be a non-negative number, got {beta!r}")
    lo = _bt(logp_old, "logp_old")
    lr = _bt(logp_ref, "logp_ref", like=lo)
    m = as_bool(mask, "mask", like=lo)
    check_same_shape(lo, "logp_old", logp_ref=lr, mask=m)
    term = as_float(terminal, "terminal", like=lo).to(lo.dtype)
    if term.dim() != 1 or term.shape[0] != lo.shape[0]:
        raise ValueError(f"terminal: expected shape [{lo.shape[0]}], got {tuple(term.shape)}")
    live = ~torch.isnan(term)
    m = m & live.unsqueeze(1)
    zero = torch.zeros((), dtype=lo.dtype, device=lo.device)
    d = (lo - lr).detach()
    rewards = torch.where(m, -float(beta) * d, zero)
    last = last_valid_index(m)
    has = last >= 0
    rows = torch.arange(lo.shape[0], device=lo.device)[has]
    rewards[rows, last[has]] += term[has].detach()
    return rewards


def returns_to_go(token_rewards: Tensorish, mask: Tensorish, gamma: float = 1.0) -> torch.Tensor:
    """Reverse discounted cumulative sum over the valid tokens of each row (seed 000, eq. 14).

    ``A_{i,t} = Σ_{s ≥ t, s valid} gamma^{n(s) − n(t)} r_{i,s}`` where ``n(·)`` counts valid
    tokens, so masked positions neither add reward nor consume a discount step; they get 0.

    Shapes: ``token_rewards[B, T]``, ``mask[B, T]`` -> ``Tensor[B, T]``.
    """
    if not isinstance(gamma, (int, float)) or not (0.0 <= gamma <= 1.0):
        raise ValueError(f"gamma: must be a number in [0, 1], got {gamma!r}")
    r = _bt(token_rewards, "token_rewards")
    m = as_bool(mask, "mask", like=r)
    check_same_shape(r, "token_rewards", mask=m)
    zero = torch.zeros((), dtype=r.dtype, device=r.device)
    r = torch.where(m, r.detach(), zero)
    if gamma == 1.0:
        out = torch.flip(torch.cumsum(torch.flip(r, [1]), dim=1), [1])
        return torch.where(m, out, zero)
    out = torch.zeros_like(r)
    running = torch.zeros(r.shape[0], dtype=r.dtype, device=r.device)
    for t in range(r.shape[1] - 1, -1, -1):
        mt = m[:, t]
        running = torch.where(mt, r[:, t] + gamma * running, running)
        out[:, t] = torch.where(mt, running, zero)
    return out


def k1_token_advantages(
    terminal: Tensorish,
    logp_old: Tensorish,
    logp_ref: Tensorish,
    mask: Tensorish,
    beta: float,
    gamma: float = 1.0,
) -> torch.Tensor:
    """Agentic-miniRL token advantages in the order of seed 000, eq. 14.

    ``returns_to_go(token_rewards_with_k1(terminal, logp_old, logp_ref, mask, beta), mask, gamma)``
    where ``terminal[B]`` is the RLOO-centred executable return of each trajectory.
    Shapes: ``terminal[B]``, others ``[B, T]`` -> ``Tensor[B, T]`` (0 on masked tokens).
    """
    rewards = token_rewards_with_k1(terminal, logp_old, logp_ref, mask, beta)
    return returns_to_go(rewards, mask, gamma)
