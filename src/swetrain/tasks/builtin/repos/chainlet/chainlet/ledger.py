"""The chain: block validation, balances and transaction rules."""
from __future__ import annotations

from .block import COINBASE, Block, Transaction, meets_difficulty

GENESIS_PREV = "0" * 64


class LedgerError(ValueError):
    """A block or transaction breaks a ledger rule."""


class Chain:
    """A proof-of-work chain with a fixed ``difficulty`` and mining ``reward``."""

    def __init__(self, difficulty: int = 1, reward: int = 50) -> None:
        self.difficulty = difficulty
        self.reward = reward
        genesis = Block(0, GENESIS_PREV, 0, [])
        genesis.mine(difficulty)
        self.blocks: list[Block] = [genesis]

    @property
    def tip(self) -> Block:
        return self.blocks[-1]

    @property
    def height(self) -> int:
        """Index of the last block (genesis is height 0)."""
        return len(self.blocks) - 1

    def balances(self, upto: int | None = None) -> dict[str, int]:
        """Balances after the blocks ``0..upto`` (all blocks by default)."""
        last = self.height if upto is None else upto
        bal: dict[str, int] = {}
        for block in self.blocks[: last + 1]:
            for tx in block.transactions:
                if tx.sender != COINBASE:
                    bal[tx.sender] = bal.get(tx.sender, 0) - tx.amount - tx.fee
                bal[tx.recipient] = bal.get(tx.recipient, 0) + tx.amount
        return bal

    def balance(self, account: str) -> int:
        return self.balances().get(account, 0)

    def next_nonce(self, account: str) -> int:
        """The nonce the next transaction from ``account`` must carry."""
        return sum(1 for b in self.blocks for tx in b.transactions if tx.sender == account)

    def make_block(self, transactions: list[Transaction], miner: str, timestamp: int) -> Block:
        """Build and mine a block paying ``miner`` the reward plus all fees via a leading coinbase."""
        fees = sum(tx.fee for tx in transactions)
        coinbase = Transaction(COINBASE, miner, self.reward + fees, 0, self.height + 1)
        block = Block(self.height + 1, self.tip.hash, timestamp, [coinbase] + list(transactions))
        block.mine(self.difficulty)
        return block

    def validate_block(self, block: Block) -> None:
        """Raise ``LedgerError`` unless ``block`` can extend the tip."""
        if block.index != self.height + 1:
            raise LedgerError(f"expected index {self.height + 1}, got {block.index}")
        if block.prev_hash != self.tip.hash:
            raise LedgerError("prev_hash does not match the tip")
        if block.timestamp < self.tip.timestamp:
            raise LedgerError("timestamp goes backwards")
        if not meets_difficulty(block.hash, self.difficulty):
            raise LedgerError("insufficient proof of work")
        txs = block.transactions
        if not txs or txs[0].sender != COINBASE:
            raise LedgerError("first transaction must be the coinbase")
        if any(tx.sender == COINBASE for tx in txs[1:]):
            raise LedgerError("only one coinbase allowed")
        fees = sum(tx.fee for tx in txs[1:])
        if txs[0].amount > self.reward + fees:
            raise LedgerError("coinbase pays more than reward plus fees")
        balances = self.balances()
        nonces: dict[str, int] = {}
        for tx in txs[1:]:
            if tx.amount <= 0:
                raise LedgerError(f"amount must be positive in {tx.txid[:8]}")
            if tx.fee < 0:
                raise LedgerError("negative fee")
            if tx.sender == tx.recipient:
                raise LedgerError("sender and recipient are the same")
            expected = nonces.get(tx.sender, self.next_nonce(tx.sender))
            if tx.nonce != expected:
                raise LedgerError(f"bad nonce for {tx.sender}: expected {expected}, got {tx.nonce}")
            nonces[tx.sender] = expected + 1
            cost = tx.amount + tx.fee
            if balances.get(tx.sender, 0) < cost:
                raise LedgerError(f"insufficient funds for {tx.sender}")
            balances[tx.sender] = balances.get(tx.sender, 0) - cost
            balances[tx.recipient] = balances.get(tx.recipient, 0) + tx.amount

    def add_block(self, block: Block) -> None:
        """Validate and append ``block``."""
        self.validate_block(block)
        self.blocks.append(block)

    def is_valid(self) -> bool:
        """Re-check every link, proof of work and index of the stored chain."""
        for i in range(1, len(self.blocks)):
            prev, cur = self.blocks[i - 1], self.blocks[i]
            if cur.index != i or cur.prev_hash != prev.hash:
                return False
            if not meets_difficulty(cur.hash, self.difficulty):
                return False
        return meets_difficulty(self.blocks[0].hash, self.difficulty)
