import hashlib

import pytest

from chainlet import merkle_proof, merkle_root, sha256_hex, verify_proof


def h(x):
    return hashlib.sha256(x.encode()).hexdigest()


def test_sha256_hex_known():
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_root_empty():
    assert merkle_root([]) == "0" * 64


def test_root_single_leaf_is_leaf_hash():
    assert merkle_root(["a"]) == h("a")


def test_root_two_leaves():
    assert merkle_root(["a", "b"]) == h(h("a") + h("b"))


def test_root_odd_duplicates_last():
    ab = h(h("a") + h("b"))
    cc = h(h("c") + h("c"))
    assert merkle_root(["a", "b", "c"]) == h(ab + cc)


def test_root_order_matters():
    assert merkle_root(["a", "b"]) != merkle_root(["b", "a"])


def test_proof_lengths():
    assert len(merkle_proof(["a"], 0)) == 0
    assert len(merkle_proof(list("abcde"), 4)) == 3


def test_proof_sides_for_first_leaf():
    proof = merkle_proof(["a", "b", "c", "d"], 0)
    assert [side for side, _ in proof] == ["R", "R"]


def test_proof_sides_for_last_leaf():
    proof = merkle_proof(["a", "b", "c", "d"], 3)
    assert [side for side, _ in proof] == ["L", "L"]
    assert proof[0][1] == h("c")


def test_every_proof_verifies():
    leaves = [f"tx{i}" for i in range(7)]
    root = merkle_root(leaves)
    for i, leaf in enumerate(leaves):
        assert verify_proof(leaf, merkle_proof(leaves, i), root), f"proof for leaf {i} failed"


def test_proof_fails_for_wrong_leaf():
    leaves = ["a", "b", "c"]
    assert not verify_proof("x", merkle_proof(leaves, 1), merkle_root(leaves))


def test_proof_index_out_of_range():
    with pytest.raises(IndexError):
        merkle_proof(["a"], 1)
    with pytest.raises(IndexError):
        merkle_proof(["a"], -1)


def test_verify_bad_side():
    with pytest.raises(ValueError):
        verify_proof("a", [("X", "00")], "00")
