"""gridplay: 2D vectors, collision tests and grid boards for small games."""
from .vector import Vec2
from .collide import AABB, circle_hits_aabb, circles_overlap, sweep_aabb
from .board import Board, connect_winner

__all__ = ["Vec2", "AABB", "circle_hits_aabb", "circles_overlap", "sweep_aabb", "Board", "connect_winner"]
