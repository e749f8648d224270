import pytest

from difflite import Hunk, PatchError, apply_hunks, parse_unified, unified_diff

A = list("abcdefghij")
B = list("abXdefghiYj")


def test_equal_inputs_empty_diff():
    assert unified_diff(["a"], ["a"]) == ""


def test_headers_and_names():
    text = unified_diff(["a"], ["b"], old_name="old.txt", new_name="new.txt")
    assert text.startswith("--- old.txt\n+++ new.txt\n@@ -1 +1 @@\n-a\n+b\n")


def test_two_hunks_when_far_apart():
    text = unified_diff(A, B, context=1)
    assert text.count("@@ -") == 2
    assert "@@ -2,3 +2,3 @@" in text and "@@ -9,2 +9,3 @@" in text


def test_one_hunk_with_more_context():
    text = unified_diff(A, B, context=3)
    assert text.count("@@ -") == 1 and "@@ -1,10 +1,11 @@" in text


def test_merge_boundary_exactly_two_context():
    a = list("aXbcY")
    b = list("a1bc2")
    assert unified_diff(a, b, context=1).count("@@ -") == 1, "2 unchanged lines == 2*context merge"
    a2, b2 = list("aXbcdY"), list("a1bcd2")
    assert unified_diff(a2, b2, context=1).count("@@ -") == 2


def test_insert_into_empty_file():
    assert "@@ -0,0 +1,2 @@" in unified_diff([], ["x", "y"])


def test_pure_insertion_header_zero_context():
    assert "@@ -2,0 +3 @@" in unified_diff(["a", "b"], ["a", "b", "c"], context=0)


def test_pure_deletion_header_zero_context():
    assert "@@ -2 +1,0 @@" in unified_diff(["a", "b", "c"], ["a", "c"], context=0)


def test_hunk_header_format():
    assert Hunk(3, 1, 3, 0).header() == "@@ -3 +3,0 @@"


def test_parse_counts_and_lines():
    hunks = parse_unified(unified_diff(A, B, context=1))
    assert [(h.old_start, h.old_len, h.new_start, h.new_len) for h in hunks] == [(2, 3, 2, 3), (9, 2, 9, 3)]
    assert hunks[0].lines == [" b", "-c", "+X", " d"]


def test_parse_defaults_length_one():
    assert parse_unified("@@ -4 +4 @@\n-x\n+y\n")[0].old_len == 1


def test_parse_truncated():
    with pytest.raises(PatchError, match="truncated"):
        parse_unified("@@ -1,2 +1,2 @@\n a\n")


def test_parse_bad_line():
    with pytest.raises(PatchError, match="bad hunk line"):
        parse_unified("@@ -1 +1 @@\n?x\n")


def test_parse_hunk_line_starting_with_dashes():
    hunks = parse_unified("--- a\n+++ b\n@@ -1 +1 @@\n--- old\n+++ new\n")
    assert hunks[0].lines == ["--- old", "+++ new"]


def test_apply_roundtrip():
    for ctx in (0, 1, 3):
        assert apply_hunks(A, parse_unified(unified_diff(A, B, context=ctx))) == B


def test_apply_insertion_at_start():
    a, b = ["x"], ["new", "x"]
    assert apply_hunks(a, parse_unified(unified_diff(a, b, context=0))) == b


def test_apply_to_empty():
    assert apply_hunks([], parse_unified(unified_diff([], ["p", "q"]))) == ["p", "q"]


def test_apply_mismatch():
    hunks = parse_unified(unified_diff(A, B, context=1))
    with pytest.raises(PatchError, match="does not match"):
        apply_hunks(list("abZdefghij"), hunks)


def test_apply_beyond_end():
    with pytest.raises(PatchError):
        apply_hunks(["a"], [Hunk(2, 1, 2, 1, ["-b", "+c"])])


def test_apply_overlapping_hunks():
    hunks = [Hunk(2, 1, 2, 1, ["-b", "+B"]), Hunk(1, 1, 1, 1, ["-a", "+A"])]
    with pytest.raises(PatchError, match="overlaps"):
        apply_hunks(["a", "b"], hunks)
