import pytest

from gridplay import Board, connect_winner


def test_size_validation():
    with pytest.raises(ValueError):
        Board(0, 3)


def test_from_strings():
    b = Board.from_strings(["a.", ".b"])
    assert b.get((0, 0)) == "a" and b.get((0, 1)) is None and b.get((1, 1)) == "b"


def test_from_strings_ragged():
    with pytest.raises(ValueError):
        Board.from_strings(["ab", "c"])


def test_in_bounds_edges():
    b = Board(2, 3)
    assert b.in_bounds((0, 0)) and b.in_bounds((1, 2))
    assert not b.in_bounds((2, 0)) and not b.in_bounds((0, 3)) and not b.in_bounds((-1, 0))


def test_get_set_out_of_bounds():
    b = Board(2, 2)
    with pytest.raises(IndexError):
        b.get((2, 2))
    with pytest.raises(IndexError):
        b.set((0, -1), 1)


def test_neighbors_corner_and_center():
    b = Board(3, 3)
    assert b.neighbors((0, 0)) == [(1, 0), (0, 1)]
    assert b.neighbors((1, 1)) == [(0, 1), (2, 1), (1, 0), (1, 2)]


def test_neighbors_diagonal():
    b = Board(3, 3)
    assert len(b.neighbors((1, 1), diagonal=True)) == 8
    assert b.neighbors((2, 2), diagonal=True) == [(1, 2), (2, 1), (1, 1)]


def test_flood_fill_region():
    b = Board.from_strings(["..#", ".##", "#.."])
    changed = b.flood_fill((0, 0), "x")
    assert changed == 3 and b.count("x") == 3 and b.get((2, 1)) is None


def test_flood_fill_same_value_noop():
    b = Board.from_strings(["aa"])
    assert b.flood_fill((0, 0), "a") == 0


def test_flood_fill_not_diagonal():
    b = Board.from_strings([".#", "#."])
    assert b.flood_fill((0, 0), "o") == 1


def test_shortest_path_open():
    b = Board(3, 3)
    path = b.shortest_path((0, 0), (2, 2))
    assert len(path) == 5 and path[0] == (0, 0) and path[-1] == (2, 2)


def test_shortest_path_around_wall():
    b = Board.from_strings(["...", "##.", "..."])
    path = b.shortest_path((0, 0), (2, 0))
    assert path == [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0)]


def test_shortest_path_blocked():
    b = Board.from_strings([".#.", ".#.", ".#."])
    assert b.shortest_path((0, 0), (0, 2)) is None


def test_shortest_path_to_self():
    assert Board(2, 2).shortest_path((1, 1), (1, 1)) == [(1, 1)]


def test_shortest_path_wall_endpoint():
    b = Board.from_strings([".#"])
    assert b.shortest_path((0, 0), (0, 1)) is None
    assert b.shortest_path((0, 0), (0, 5)) is None


def test_count_and_iter():
    b = Board.from_strings(["ab", "ba"])
    assert b.count("a") == 2 and len(list(b)) == 4


def test_connect_row():
    assert connect_winner(Board.from_strings(["xxx.", "oo..", "...."]), 3) == "x"


def test_connect_column():
    assert connect_winner(Board.from_strings(["o..", "o..", "o.."]), 3) == "o"


def test_connect_diagonals():
    assert connect_winner(Board.from_strings(["x..", ".x.", "..x"]), 3) == "x"
    assert connect_winner(Board.from_strings(["..o", ".o.", "o.."]), 3) == "o"


def test_connect_needs_full_length():
    assert connect_winner(Board.from_strings(["xx.x"]), 3) is None


def test_connect_line_at_board_edge():
    assert connect_winner(Board.from_strings(["....", ".ooo"]), 3) == "o"


def test_connect_n_validation():
    with pytest.raises(ValueError):
        connect_winner(Board(1, 1), 1)
