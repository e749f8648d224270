import pytest

from cartwise import Inventory, OutOfStock, Product, format_cents, parse_price, percent_of


def test_percent_of_exact():
    assert percent_of(1000, 10) == 100


def test_percent_of_rounds_half_up():
    assert percent_of(1000, 8.25) == 83  # 82.5 -> 83
    assert percent_of(999, 10) == 100    # 99.9 -> 100


def test_percent_of_rounds_down_below_half():
    assert percent_of(1001, 10) == 100   # 100.1 -> 100
    assert percent_of(1004, 10) == 100   # 100.4 -> 100


def test_percent_of_negative_rejected():
    with pytest.raises(ValueError):
        percent_of(-1, 10)


def test_format_cents():
    assert format_cents(123456) == "$1,234.56"
    assert format_cents(5) == "$0.05"
    assert format_cents(-100) == "-$1.00"


def test_parse_price_variants():
    assert parse_price("12") == 1200
    assert parse_price("12.5") == 1250
    assert parse_price(" $1,234.56 ") == 123456
    assert parse_price("0.07") == 7


def test_parse_price_errors():
    for bad in ["", "abc", "1.234", "1.x", "-5"]:
        with pytest.raises(ValueError):
            parse_price(bad)


def test_product_negative_price():
    with pytest.raises(ValueError):
        Product("x", "X", -1)


def test_inventory_reserve_and_available():
    inv = Inventory({"a": 5})
    inv.reserve("a", 3)
    assert inv.available("a") == 2


def test_inventory_reserve_exact_remaining():
    inv = Inventory({"a": 2})
    inv.reserve("a", 2)
    assert inv.available("a") == 0


def test_inventory_out_of_stock():
    inv = Inventory({"a": 2})
    with pytest.raises(OutOfStock, match="only 2"):
        inv.reserve("a", 3)


def test_inventory_unknown_sku_has_none():
    with pytest.raises(OutOfStock):
        Inventory().reserve("zzz", 1)


def test_inventory_release_floor_zero():
    inv = Inventory({"a": 5})
    inv.reserve("a", 1)
    inv.release("a", 4)
    assert inv.reserved["a"] == 0 and inv.available("a") == 5


def test_inventory_commit():
    inv = Inventory({"a": 5})
    inv.reserve("a", 2)
    inv.commit("a", 2)
    assert inv.on_hand["a"] == 3 and inv.available("a") == 3


def test_inventory_commit_more_than_reserved():
    inv = Inventory({"a": 5})
    inv.reserve("a", 1)
    with pytest.raises(ValueError, match="cannot commit"):
        inv.commit("a", 2)


def test_inventory_restock():
    inv = Inventory()
    inv.restock("a", 4)
    assert inv.available("a") == 4
    with pytest.raises(ValueError):
        inv.restock("a", 0)
