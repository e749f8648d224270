"""recflow: load CSV text into typed records, validate against a schema, transform and aggregate."""
from .schema import Field, Schema, SchemaError, coerce
from .io import read_csv, write_csv
from .ops import aggregate, dedupe, group_by, inner_join, left_join, select, sort_records, where

__all__ = [
    "Field", "Schema", "SchemaError", "coerce", "read_csv", "write_csv",
    "aggregate", "dedupe", "group_by", "inner_join", "left_join", "select", "sort_records", "where",
]
