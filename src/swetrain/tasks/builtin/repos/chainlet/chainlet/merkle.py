"""SHA-256 merkle trees: root, inclusion proofs and proof verification."""
from __future__ import annotations

import hashlib

EMPTY_ROOT = "0" * 64


def sha256_hex(data: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of ``data``."""
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _parent(left: str, right: str) -> str:
    return sha256_hex(left + right)


def _next_level(level: list[str]) -> list[str]:
    if len(level) % 2 == 1:
        level = level + [level[-1]]
    return [_parent(level[i], level[i + 1]) for i in range(0, len(level), 2)]


def merkle_root(leaves: list[str]) -> str:
    """Root over the hashes of ``leaves``; an odd level duplicates its last node; no leaves -> 64 zeros."""
    if not leaves:
        return EMPTY_ROOT
    level = [sha256_hex(leaf) for leaf in leaves]
    while len(level) > 1:
        level = _next_level(level)
    return level[0]


def merkle_proof(leaves: list[str], index: int) -> list[tuple[str, str]]:
    """Sibling path for leaf ``index``: a list of ``(side, hash)`` with side ``"L"`` or ``"R"``."""
    if index < 0 or index >= len(leaves):
        raise IndexError(f"leaf index {index} out of range for {len(leaves)} leaves")
    level = [sha256_hex(leaf) for leaf in leaves]
    proof: list[tuple[str, str]] = []
    pos = index
    while len(level) > 1:
        if len(level) % 2 == 1:
            level = level + [level[-1]]
        if pos % 2 == 0:
            proof.append(("R", level[pos + 1]))
        else:
            proof.append(("L", level[pos - 1]))
        level = [_parent(level[i], level[i + 1]) for i in range(0, len(level), 2)]
        pos //= 2
    return proof


def verify_proof(leaf: str, proof: list[tuple[str, str]], root: str) -> bool:
    """True when hashing ``leaf`` up along ``proof`` yields ``root``."""
    node = sha256_hex(leaf)
    for side, sibling in proof:
        if side == "L":
            node = _parent(sibling, node)
        elif side == "R":
            node = _parent(node, sibling)
        else:
            raise ValueError(f"bad proof side {side!r}")
    return node == root
