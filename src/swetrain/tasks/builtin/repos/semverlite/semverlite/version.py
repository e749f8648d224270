"""Semantic version numbers (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])."""
from __future__ import annotations

from functools import total_ordering


class VersionError(ValueError):
    """A string that is not a semantic version."""


def _numeric(text: str, what: str, original: str) -> int:
    if not text.isdigit():
        raise VersionError(f"{what} {text!r} is not a number in {original!r}")
    if len(text) > 1 and text[0] == "0":
        raise VersionError(f"{what} {text!r} has a leading zero in {original!r}")
    return int(text)


@total_ordering
class Version:
    """A parsed version; ordering follows SemVer 2.0 precedence (build metadata is ignored)."""

    def __init__(self, major: int, minor: int = 0, patch: int = 0, pre: tuple[str, ...] = (), build: tuple[str, ...] = ()):
        if min(major, minor, patch) < 0:
            raise VersionError("version numbers must be non-negative")
        self.major, self.minor, self.patch = major, minor, patch
        self.pre = tuple(pre)
        self.build = tuple(build)

    @classmethod
    def parse(cls, text: str) -> "Version":
        """Parse ``1.2.3``, ``v1.2.3``, ``1.2.3-rc.1+build.5``."""
        original = text
        text = text.strip()
        if text[:1] in ("v", "V"):
            text = text[1:]
        text, _, build = text.partition("+")
        core, dash, pre = text.partition("-")
        nums = core.split(".")
        if len(nums) != 3:
            raise VersionError(f"expected MAJOR.MINOR.PATCH in {original!r}")
        major, minor, patch = (_numeric(n, "component", original) for n in nums)
        pre_parts = tuple(pre.split(".")) if dash else ()
        if dash and any(p == "" for p in pre_parts):
            raise VersionError(f"empty pre-release identifier in {original!r}")
        build_parts = tuple(build.split(".")) if build else ()
        return cls(major, minor, patch, pre_parts, build_parts)

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Version({str(self)!r})"

    def _key(self) -> tuple:
        # A release sorts after all of its pre-releases.
        if not self.pre:
            pre_key: tuple = ((1,),)
        else:
            pre_key = tuple((0, int(p), "") if p.isdigit() else (0, float("inf"), p) for p in self.pre)
            pre_key = ((0,),) + pre_key
        return (self.major, self.minor, self.patch, pre_key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: "Version") -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def is_prerelease(self) -> bool:
        return bool(self.pre)

    def bump(self, part: str) -> "Version":
        """Next ``major``/``minor``/``patch`` version (lower parts reset, pre-release dropped).

        Bumping ``patch`` of a pre-release just drops the pre-release (``1.2.3-rc`` -> ``1.2.3``).
        """
        if part == "major":
            return Version(self.major + 1, 0, 0)
        if part == "minor":
            return Version(self.major, self.minor + 1, 0)
        if part == "patch":
            if self.pre:
                return Version(self.major, self.minor, self.patch)
            return Version(self.major, self.minor, self.patch + 1)
        raise ValueError(f"unknown part {part!r}")
