"""swetrain.eval: evaluation metrics (Resolved@K, recovery, token cost, category gains, bootstrap).

See :mod:`swetrain.eval.metrics`.
"""

from .metrics import (
    BootstrapCI,
    CategorySummary,
    TokenBudget,
    category_summary,
    conditional_recovery,
    cumulative_tokens,
    paired_bootstrap,
    recovery_from_resolved,
    resolved_at,
    resolved_curve,
    tokens_to_reach,
)

__all__ = [
    "BootstrapCI",
    "CategorySummary",
    "TokenBudget",
    "category_summary",
    "conditional_recovery",
    "cumulative_tokens",
    "paired_bootstrap",
    "recovery_from_resolved",
    "resolved_at",
    "resolved_curve",
    "tokens_to_reach",
]
