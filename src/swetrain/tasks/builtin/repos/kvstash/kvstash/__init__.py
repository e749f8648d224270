"""kvstash: an in-memory key-value store with TTL, transactions, LRU eviction and a command log."""
from .clock import ManualClock
from .store import KeyExpired, Store, TransactionError
from .log import decode_entry, encode_entry, replay

__all__ = ["ManualClock", "KeyExpired", "Store", "TransactionError", "decode_entry", "encode_entry", "replay"]
