"""chainlet: a tiny proof-of-work ledger with merkle roots and balance checks."""
from .merkle import merkle_proof, merkle_root, sha256_hex, verify_proof
from .block import Block, Transaction, meets_difficulty
from .ledger import Chain, LedgerError

__all__ = [
    "merkle_proof", "merkle_root", "sha256_hex", "verify_proof",
    "Block", "Transaction", "meets_difficulty", "Chain", "LedgerError",
]
