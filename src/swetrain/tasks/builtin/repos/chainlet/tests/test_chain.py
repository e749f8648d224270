import pytest

from chainlet import Block, Chain, LedgerError, Transaction, meets_difficulty
from chainlet.block import COINBASE


def funded_chain():
    """A chain where alice mined block 1 (50 coins)."""
    c = Chain(difficulty=1, reward=50)
    c.add_block(c.make_block([], "alice", timestamp=10))
    return c


def forged(chain, txs, timestamp=20, index=None, prev=None):
    b = Block(chain.height + 1 if index is None else index, chain.tip.hash if prev is None else prev, timestamp, txs)
    b.mine(chain.difficulty)
    return b


def test_meets_difficulty():
    assert meets_difficulty("00ab", 2)
    assert not meets_difficulty("0ab0", 2)
    assert meets_difficulty("abc", 0)


def test_meets_difficulty_negative():
    with pytest.raises(ValueError):
        meets_difficulty("00", -1)


def test_mine_finds_valid_nonce():
    b = Block(1, "x", 0, [])
    h = b.mine(2)
    assert h.startswith("00") and b.hash == h


def test_txid_changes_with_amount():
    assert Transaction("a", "b", 1).txid != Transaction("a", "b", 2).txid


def test_genesis():
    c = Chain()
    assert c.height == 0 and c.tip.prev_hash == "0" * 64 and c.is_valid()


def test_mining_reward_credited():
    c = funded_chain()
    assert c.balance("alice") == 50 and c.height == 1


def test_transfer_with_fee():
    c = funded_chain()
    c.add_block(c.make_block([Transaction("alice", "bob", 20, fee=2, nonce=0)], "miner", 20))
    assert c.balances() == {"alice": 28, "bob": 20, "miner": 52}


def test_balances_upto():
    c = funded_chain()
    c.add_block(c.make_block([Transaction("alice", "bob", 5)], "m", 20))
    assert c.balances(upto=1) == {"alice": 50}


def test_next_nonce_counts_sent():
    c = funded_chain()
    c.add_block(c.make_block([Transaction("alice", "bob", 5, nonce=0), Transaction("alice", "bob", 5, nonce=1)], "m", 20))
    assert c.next_nonce("alice") == 2 and c.next_nonce("bob") == 0


def test_spend_entire_balance_allowed():
    c = funded_chain()
    c.add_block(c.make_block([Transaction("alice", "bob", 48, fee=2)], "m", 20))
    assert c.balance("alice") == 0


def test_insufficient_funds_including_fee():
    c = funded_chain()
    with pytest.raises(LedgerError, match="insufficient"):
        c.add_block(c.make_block([Transaction("alice", "bob", 49, fee=2)], "m", 20))


def test_funds_tracked_within_block():
    c = funded_chain()
    txs = [Transaction("alice", "bob", 30, nonce=0), Transaction("alice", "carol", 30, nonce=1)]
    with pytest.raises(LedgerError, match="insufficient"):
        c.add_block(c.make_block(txs, "m", 20))


def test_received_funds_spendable_in_same_block():
    c = funded_chain()
    txs = [Transaction("alice", "bob", 30, nonce=0), Transaction("bob", "carol", 10, nonce=0)]
    c.add_block(c.make_block(txs, "m", 20))
    assert c.balance("carol") == 10 and c.balance("bob") == 20


def test_bad_nonce():
    c = funded_chain()
    with pytest.raises(LedgerError, match="nonce"):
        c.add_block(c.make_block([Transaction("alice", "bob", 1, nonce=1)], "m", 20))


def test_replayed_nonce_in_block():
    c = funded_chain()
    txs = [Transaction("alice", "bob", 1, nonce=0), Transaction("alice", "bob", 1, nonce=0)]
    with pytest.raises(LedgerError, match="nonce"):
        c.add_block(c.make_block(txs, "m", 20))


def test_zero_amount_rejected():
    c = funded_chain()
    with pytest.raises(LedgerError, match="positive"):
        c.add_block(c.make_block([Transaction("alice", "bob", 0)], "m", 20))


def test_negative_fee_rejected():
    c = funded_chain()
    with pytest.raises(LedgerError, match="fee"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 50), Transaction("alice", "bob", 1, fee=-1)]))


def test_self_transfer_rejected():
    c = funded_chain()
    with pytest.raises(LedgerError, match="same"):
        c.add_block(c.make_block([Transaction("alice", "alice", 1)], "m", 20))


def test_wrong_index():
    c = funded_chain()
    with pytest.raises(LedgerError, match="index"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 50)], index=5))


def test_wrong_prev_hash():
    c = funded_chain()
    with pytest.raises(LedgerError, match="prev_hash"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 50)], prev="f" * 64))


def test_timestamp_backwards():
    c = funded_chain()
    with pytest.raises(LedgerError, match="timestamp"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 50)], timestamp=9))


def test_equal_timestamp_allowed():
    c = funded_chain()
    c.add_block(forged(c, [Transaction(COINBASE, "m", 50)], timestamp=10))
    assert c.height == 2


def test_insufficient_work():
    c = funded_chain()
    b = forged(c, [Transaction(COINBASE, "m", 50)])
    while b.hash.startswith("0"):
        b.nonce += 1
    with pytest.raises(LedgerError, match="proof of work"):
        c.add_block(b)


def test_missing_coinbase():
    c = funded_chain()
    with pytest.raises(LedgerError, match="coinbase"):
        c.add_block(forged(c, [Transaction("alice", "bob", 1)]))


def test_two_coinbases():
    c = funded_chain()
    with pytest.raises(LedgerError, match="one coinbase"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 50), Transaction(COINBASE, "x", 1)]))


def test_coinbase_overpay():
    c = funded_chain()
    with pytest.raises(LedgerError, match="more than"):
        c.add_block(forged(c, [Transaction(COINBASE, "m", 51)]))


def test_coinbase_may_claim_fees():
    c = funded_chain()
    c.add_block(forged(c, [Transaction(COINBASE, "m", 53), Transaction("alice", "bob", 1, fee=3)]))
    assert c.balance("m") == 53


def test_is_valid_detects_tampering():
    c = funded_chain()
    c.add_block(c.make_block([Transaction("alice", "bob", 5)], "m", 20))
    assert c.is_valid()
    c.blocks[1].transactions[0] = Transaction(COINBASE, "eve", 50, 0, 1)
    assert not c.is_valid()


def test_is_valid_detects_bad_index():
    c = funded_chain()
    c.blocks[1].index = 7
    assert not c.is_valid()
