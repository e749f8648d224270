"""npm-style version ranges: ``^1.2.3``, ``~1.2``, ``>=1.0.0 <2.0.0``, ``1.x``, ``a || b``."""
from __future__ import annotations

from typing import Iterable

from .version import Version, VersionError

Comparator = tuple[str, Version]


def _partial(text: str) -> tuple[list[int], int]:
    """Parse ``1``, ``1.2``, ``1.x``, ``1.2.*``; return (numbers, how many were given)."""
    parts = text.split(".")
    nums: list[int] = []
    for p in parts:
        if p in ("x", "X", "*"):
            break
        if not p.isdigit():
            raise VersionError(f"bad version {text!r}")
        nums.append(int(p))
    return nums + [0] * (3 - len(nums)), len(nums)


def _expand(token: str) -> list[Comparator]:
    if token in ("*", "x", "X", ""):
        return [(">=", Version(0, 0, 0))]
    for op in (">=", "<=", ">", "<", "="):
        if token.startswith(op):
            return [(op, Version.parse(token[len(op):]))]
    if token[0] in "^~":
        body = token[1:]
        nums, given = _partial(body.split("-")[0].split("+")[0])
        low = Version.parse(body) if given == 3 else Version(*nums)
        if token[0] == "~":
            high = Version(nums[0] + 1, 0, 0) if given == 1 else Version(nums[0], nums[1] + 1, 0)
        elif nums[0] > 0 or given == 1:
            high = Version(nums[0] + 1, 0, 0)
        elif nums[1] > 0 or given == 2:
            high = Version(0, nums[1] + 1, 0)
        else:
            high = Version(0, 0, nums[2] + 1)
        return [(">=", low), ("<", high)]
    nums, given = _partial(token.split("-")[0].split("+")[0])
    if given == 3:
        return [("=", Version.parse(token))]
    if given == 0:
        return [(">=", Version(0, 0, 0))]
    if given == 1:
        return [(">=", Version(nums[0], 0, 0)), ("<", Version(nums[0] + 1, 0, 0))]
    return [(">=", Version(nums[0], nums[1], 0)), ("<", Version(nums[0], nums[1] + 1, 0))]


def _test(op: str, left: Version, right: Version) -> bool:
    if op == ">=":
        return left >= right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == "<":
        return left < right
    return left == right


class Range:
    """A union (``||``) of intersections (space separated) of comparators."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sets: list[list[Comparator]] = []
        for alternative in text.split("||"):
            comparators: list[Comparator] = []
            for token in alternative.split():
                comparators.extend(_expand(token))
            if not comparators:
                comparators = _expand("*")
            self.sets.append(comparators)

    def contains(self, version: Version | str, include_prerelease: bool = False) -> bool:
        """True when ``version`` satisfies the range. Pre-releases only match if ``include_prerelease``
        or a comparator in the same set names a pre-release of the same major.minor.patch."""
        v = Version.parse(version) if isinstance(version, str) else version
        for comparators in self.sets:
            if not all(_test(op, v, bound) for op, bound in comparators):
                continue
            if v.is_prerelease and not include_prerelease:
                same = any(b.is_prerelease and (b.major, b.minor, b.patch) == (v.major, v.minor, v.patch) for _, b in comparators)
                if not same:
                    continue
            return True
        return False

    def __contains__(self, version: Version | str) -> bool:
        return self.contains(version)


def max_satisfying(versions: Iterable[Version | str], range_text: str) -> Version | None:
    """Highest version in ``versions`` that satisfies ``range_text``, or ``None``."""
    r = Range(range_text)
    best: Version | None = None
    for item in versions:
        v = Version.parse(item) if isinstance(item, str) else item
        if r.contains(v) and (best is None or v > best):
            best = v
    return best
