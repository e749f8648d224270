from datetime import date

import pytest

from cartwise import BuyXGetY, Cart, CartError, Coupon, FixedOff, Inventory, PercentOff, Product, checkout, shipping_cost

PEN = Product("pen", "Pen", 250, category="office", weight=20)
BOOK = Product("book", "Book", 1500, category="books", taxable=False, weight=600)
LAMP = Product("lamp", "Lamp", 4000, category="home", weight=1800)
DAY = date(2024, 6, 15)


def make_cart(max_qty=10):
    return Cart(Inventory({"pen": 100, "book": 5, "lamp": 3}), max_qty=max_qty)


def test_add_and_quantity():
    c = make_cart()
    assert c.add(PEN, 2) == 2
    assert c.add(PEN) == 3 and c.item_count == 3


def test_add_reserves_stock():
    c = make_cart()
    c.add(BOOK, 2)
    assert c.inventory.available("book") == 3


def test_add_non_positive():
    with pytest.raises(CartError):
        make_cart().add(PEN, 0)


def test_max_qty_boundary():
    c = make_cart(max_qty=3)
    c.add(PEN, 3)
    with pytest.raises(CartError, match="at most 3"):
        c.add(PEN, 1)


def test_remove_some_and_all():
    c = make_cart()
    c.add(PEN, 5)
    assert c.remove("pen", 2) == 3
    assert c.remove("pen") == 0 and "pen" not in c.lines
    assert c.inventory.available("pen") == 100


def test_remove_more_than_present_removes_line():
    c = make_cart()
    c.add(PEN, 2)
    assert c.remove("pen", 9) == 0 and c.inventory.available("pen") == 100


def test_remove_missing():
    with pytest.raises(CartError, match="not in the cart"):
        make_cart().remove("pen")


def test_remove_zero_rejected():
    c = make_cart()
    c.add(PEN)
    with pytest.raises(CartError):
        c.remove("pen", 0)


def test_set_quantity_up_down_zero():
    c = make_cart()
    c.set_quantity(PEN, 4)
    assert c.quantity("pen") == 4
    c.set_quantity(PEN, 1)
    assert c.quantity("pen") == 1
    c.set_quantity(PEN, 0)
    assert "pen" not in c.lines


def test_set_quantity_negative():
    with pytest.raises(CartError):
        make_cart().set_quantity(PEN, -1)


def test_subtotal_and_weight():
    c = make_cart()
    c.add(PEN, 2)
    c.add(BOOK)
    assert c.subtotal() == 2000 and c.line_total("pen") == 500 and c.weight() == 640


def test_percent_off_threshold():
    c = make_cart()
    c.add(BOOK)
    assert PercentOff(10, min_subtotal=1500).amount(c) == 150
    assert PercentOff(10, min_subtotal=1501).amount(c) == 0


def test_percent_off_category():
    c = make_cart()
    c.add(BOOK)
    c.add(PEN, 2)
    assert PercentOff(20, category="office").amount(c) == 100


def test_fixed_off_capped():
    c = make_cart()
    c.add(PEN)
    assert FixedOff(1000).amount(c) == 250
    assert FixedOff(100, min_subtotal=300).amount(c) == 0


def test_buy_x_get_y():
    c = make_cart()
    c.add(PEN, 7)
    assert BuyXGetY("pen", 2, 1).amount(c) == 2 * 250, "7 pens = two full groups of 3"


def test_buy_x_get_y_incomplete_group():
    c = make_cart()
    c.add(PEN, 2)
    assert BuyXGetY("pen", 2, 1).amount(c) == 0
    assert BuyXGetY("lamp", 1, 1).amount(c) == 0


def test_coupon_window_inclusive():
    cp = Coupon("SUMMER", FixedOff(100), start=date(2024, 6, 1), end=date(2024, 6, 30))
    cp.check(date(2024, 6, 1))
    cp.check(date(2024, 6, 30))
    with pytest.raises(ValueError, match="not active"):
        cp.check(date(2024, 5, 31))
    with pytest.raises(ValueError, match="expired"):
        cp.check(date(2024, 7, 1))


def test_coupon_usage_limit():
    c = make_cart()
    c.add(PEN)
    cp = Coupon("ONCE", FixedOff(50), max_uses=1)
    checkout(c, coupons=[cp], today=DAY)
    assert cp.uses == 1
    with pytest.raises(ValueError, match="used up"):
        checkout(c, coupons=[cp], today=DAY)


def test_shipping_free_threshold():
    assert shipping_cost(5000, 5000) == 0
    assert shipping_cost(4999, 0) == 499


def test_shipping_per_started_kg():
    assert shipping_cost(0, 1000) == 499
    assert shipping_cost(0, 1001) == 649
    assert shipping_cost(0, 3000) == 799


def test_checkout_totals():
    c = make_cart()
    c.add(PEN, 2)     # 500 taxable
    c.add(BOOK)       # 1500 untaxed
    t = checkout(c, tax_rate=10, today=DAY)
    assert t == {"subtotal": 2000, "discount": 0, "tax": 50, "shipping": 499, "total": 2549}


def test_checkout_discount_spreads_over_taxable():
    c = make_cart()
    c.add(PEN, 2)
    c.add(BOOK)
    t = checkout(c, discounts=[FixedOff(1000)], tax_rate=10, today=DAY)
    assert t["discount"] == 1000 and t["tax"] == 25, "half the discount falls on the taxable half"


def test_checkout_discount_capped_at_subtotal():
    c = make_cart()
    c.add(PEN)
    t = checkout(c, discounts=[FixedOff(200), FixedOff(200)], today=DAY)
    assert t["discount"] == 250 and t["total"] == 499


def test_checkout_free_shipping_uses_discounted_subtotal():
    c = make_cart()
    c.add(LAMP, 2)
    assert checkout(c, today=DAY)["shipping"] == 0
    assert checkout(c, discounts=[PercentOff(50)], today=DAY)["shipping"] == 499 + 3 * 150


def test_checkout_empty_cart():
    with pytest.raises(ValueError, match="empty"):
        checkout(make_cart(), today=DAY)


def test_checkout_invalid_coupon_does_not_count_use():
    c = make_cart()
    c.add(PEN)
    ok = Coupon("OK", FixedOff(10))
    bad = Coupon("OLD", FixedOff(10), end=date(2020, 1, 1))
    with pytest.raises(ValueError):
        checkout(c, coupons=[ok, bad], today=DAY)
    assert ok.uses == 0
