"""CSV text in and out (via the standard ``csv`` module)."""
from __future__ import annotations

import csv
import io
from typing import Any

from .schema import Schema


def read_csv(text: str, schema: Schema | None = None, delimiter: str = ",") -> list[dict[str, Any]]:
    """Parse CSV ``text`` with a header row into dicts; validate with ``schema`` if given.

    Header names are stripped; blank lines are skipped; a row with more cells than the header
    raises ``ValueError`` naming the line.
    """
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows = [row for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        return []
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise ValueError(f"duplicate column names in header: {header}")
    records: list[dict[str, Any]] = []
    for line_no, row in enumerate(rows[1:], start=2):
        if len(row) > len(header):
            raise ValueError(f"row {line_no} has {len(row)} cells but the header has {len(header)}")
        padded = row + [""] * (len(header) - len(row))
        records.append(dict(zip(header, padded)))
    if schema is not None:
        records = schema.validate(records)
    return records


def write_csv(records: list[dict[str, Any]], columns: list[str] | None = None, delimiter: str = ",") -> str:
    """Render records as CSV text with a header; columns default to first-seen order across records.

    Missing values are written empty, ``None`` as empty, booleans as ``true``/``false``.
    """
    if columns is None:
        columns = []
        for rec in records:
            for key in rec:
                if key not in columns:
                    columns.append(key)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerow(columns)
    for rec in records:
        row = []
        for col in columns:
            value = rec.get(col)
            if value is None:
                row.append("")
            elif isinstance(value, bool):
                row.append("true" if value else "false")
            else:
                row.append(str(value))
        writer.writerow(row)
    return buf.getvalue()
