"""layoutbox: geometry, box layouts, hit testing, focus navigation and text fitting for desktop UIs."""
from .geometry import Rect
from .layout import LayoutError, Widget, box_layout, distribute
from .focus import FocusChain, hit_test
from .text import elide, wrap_words

__all__ = ["Rect", "LayoutError", "Widget", "box_layout", "distribute", "FocusChain", "hit_test", "elide", "wrap_words"]
