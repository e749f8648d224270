"""swetrain: train software-engineering agents with reinforcement learning.

Layers (lower never import higher): tasks -> env -> policy/agent -> rollout -> algos/train -> eval,
with label and curriculum beside them. See docs/architecture.md.
"""

__version__ = "0.1.0"
