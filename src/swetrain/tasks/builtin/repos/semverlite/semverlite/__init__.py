"""semverlite: semantic versions, version ranges and dependency resolution for package managers."""
from .version import Version, VersionError
from .ranges import Range, max_satisfying
from .resolve import ResolutionError, resolve

__all__ = ["Version", "VersionError", "Range", "max_satisfying", "ResolutionError", "resolve"]
