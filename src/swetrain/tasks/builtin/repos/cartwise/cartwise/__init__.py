"""cartwise: a shopping cart with inventory, discounts, coupons, tax and shipping, all in integer cents."""
from .money import format_cents, parse_price, percent_of
from .catalog import Inventory, OutOfStock, Product
from .cart import Cart, CartError
from .pricing import BuyXGetY, Coupon, FixedOff, PercentOff, checkout, shipping_cost

__all__ = [
    "format_cents", "parse_price", "percent_of", "Inventory", "OutOfStock", "Product", "Cart", "CartError",
    "BuyXGetY", "Coupon", "FixedOff", "PercentOff", "checkout", "shipping_cost",
]
