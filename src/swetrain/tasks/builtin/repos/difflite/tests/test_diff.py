from difflite import Op, diff_lines, lcs_length, similarity


def kinds(ops):
    return "".join(op.kind if op.kind != " " else "=" for op in ops)


def test_lcs_length():
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4


def test_lcs_empty():
    assert lcs_length([], ["a"]) == 0


def test_diff_identical():
    ops = diff_lines(["a", "b"], ["a", "b"])
    assert kinds(ops) == "==" and ops[1] == Op(" ", "b", 2, 2)


def test_diff_insert_only():
    assert diff_lines([], ["x", "y"]) == [Op("+", "x", None, 1), Op("+", "y", None, 2)]


def test_diff_delete_only():
    assert diff_lines(["x"], []) == [Op("-", "x", 1, None)]


def test_diff_replace_deletes_first():
    assert kinds(diff_lines(["a", "b", "c"], ["a", "x", "c"])) == "=-+="


def test_diff_line_numbers():
    ops = diff_lines(["a", "b", "c"], ["b", "c", "d"])
    assert ops[0] == Op("-", "a", 1, None)
    assert ops[1] == Op(" ", "b", 2, 1)
    assert ops[-1] == Op("+", "d", None, 3)


def test_diff_keeps_maximal_common():
    ops = diff_lines(list("abcabba"), list("cbabac"))
    assert sum(op.kind == " " for op in ops) == lcs_length(list("abcabba"), list("cbabac"))


def test_diff_reconstructs_both_sides():
    a, b = list("xaybzc"), list("abqc")
    ops = diff_lines(a, b)
    assert [op.text for op in ops if op.kind != "+"] == a
    assert [op.text for op in ops if op.kind != "-"] == b


def test_similarity():
    assert similarity([], []) == 1.0
    assert similarity(["a"], ["b"]) == 0.0
    assert similarity(["a", "b"], ["a", "c"]) == 0.5
