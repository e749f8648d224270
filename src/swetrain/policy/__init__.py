"""swetrain.policy: token-id policies (hf, openai-compatible server, vllm) and the tiny default model.

Heavy libraries (torch, transformers, vllm) are imported by the backends, not here.
"""

from swetrain.policy.base import Generation, GenerationConfig, Policy
from swetrain.policy.load import PolicySpecError, load_policy

__all__ = ["Generation", "GenerationConfig", "Policy", "PolicySpecError", "load_policy"]
