"""Typed fields and schema validation for dict records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f"}


class SchemaError(ValueError):
    """A record does not fit the schema; ``errors`` lists ``(row, field, message)`` triples."""

    def __init__(self, errors: list[tuple[int, str, str]]):
        self.errors = errors
        first = errors[0]
        super().__init__(f"{len(errors)} schema error(s); first: row {first[0]} field {first[1]!r}: {first[2]}")


def coerce(value: Any, kind: str) -> Any:
    """Convert ``value`` (usually text) to ``kind``: ``str``, ``int``, ``float`` or ``bool``.

    Surrounding whitespace is stripped for numbers and booleans; raises ``ValueError`` if impossible.
    """
    if kind == "str":
        return "" if value is None else str(value)
    if isinstance(value, str):
        value = value.strip()
    if kind == "int":
        if isinstance(value, bool):
            raise ValueError("bool is not an int")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{value} is not integral")
            return int(value)
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"not a boolean: {value!r}")
    raise ValueError(f"unknown kind {kind!r}")


@dataclass
class Field:
    """One column: its type, whether it may be empty, a default, and optional numeric bounds/choices."""

    name: str
    kind: str = "str"
    required: bool = True
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None

    def check(self, raw: Any) -> Any:
        """Return the coerced value or raise ``ValueError`` explaining why it is invalid."""
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            if self.required:
                raise ValueError("value is required")
            return self.default
        value = coerce(raw, self.kind)
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{value} is below minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{value} is above maximum {self.maximum}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{value!r} not in {list(self.choices)}")
        return value


@dataclass
class Schema:
    """An ordered set of fields; ``strict`` rejects unknown columns."""

    fields: list[Field]
    strict: bool = False
    _index: dict[str, Field] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = {}
        for f in self.fields:
            if f.name in self._index:
                raise ValueError(f"duplicate field {f.name!r}")
            self._index[f.name] = f

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def validate(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Coerce every record; collect all problems and raise one ``SchemaError`` if any.

        Rows are numbered from 1. Unknown columns are dropped, or reported when ``strict``.
        """
        errors: list[tuple[int, str, str]] = []
        out: list[dict[str, Any]] = []
        for row_no, record in enumerate(records, start=1):
            clean: dict[str, Any] = {}
            for f in self.fields:
                try:
                    clean[f.name] = f.check(record.get(f.name))
                except ValueError as exc:
                    errors.append((row_no, f.name, str(exc)))
            if self.strict:
                for extra in sorted(set(record) - set(self._index)):
                    errors.append((row_no, extra, "unknown column"))
            out.append(clean)
        if errors:
            raise SchemaError(errors)
        return out
