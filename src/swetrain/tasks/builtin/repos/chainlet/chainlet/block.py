"""Transactions and proof-of-work blocks."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .merkle import merkle_root, sha256_hex

COINBASE = "COINBASE"


@dataclass(frozen=True)
class Transaction:
    """A transfer; ``nonce`` is the sender's 0-based transaction counter; coinbase has no fee."""

    sender: str
    recipient: str
    amount: int
    fee: int = 0
    nonce: int = 0

    def serialize(self) -> str:
        """Canonical JSON text used for hashing."""
        return json.dumps([self.sender, self.recipient, self.amount, self.fee, self.nonce], separators=(",", ":"))

    @property
    def txid(self) -> str:
        return sha256_hex(self.serialize())


def meets_difficulty(block_hash: str, difficulty: int) -> bool:
    """True when the hex hash starts with at least ``difficulty`` zeros."""
    if difficulty < 0:
        raise ValueError("difficulty must be non-negative")
    return block_hash[:difficulty] == "0" * difficulty


@dataclass
class Block:
    """A block header plus its transactions."""

    index: int
    prev_hash: str
    timestamp: int
    transactions: list[Transaction] = field(default_factory=list)
    nonce: int = 0

    @property
    def merkle(self) -> str:
        return merkle_root([tx.serialize() for tx in self.transactions])

    def header(self) -> str:
        return f"{self.index}|{self.prev_hash}|{self.timestamp}|{self.merkle}|{self.nonce}"

    @property
    def hash(self) -> str:
        return sha256_hex(self.header())

    def mine(self, difficulty: int, max_tries: int = 1_000_000) -> str:
        """Search nonces from 0 upward until the hash meets ``difficulty``; return the hash."""
        self.nonce = 0
        for _ in range(max_tries):
            h = self.hash
            if meets_difficulty(h, difficulty):
                return h
            self.nonce += 1
        raise RuntimeError(f"no nonce found in {max_tries} tries")
