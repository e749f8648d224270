"""difflite: line diffs, unified diff text, patch application and test-report summaries."""
from .diff import Op, diff_lines, lcs_length, similarity
from .unified import Hunk, PatchError, apply_hunks, parse_unified, unified_diff
from .report import TestCase, parse_report_lines, summarize

__all__ = [
    "Op", "diff_lines", "lcs_length", "similarity", "Hunk", "PatchError", "apply_hunks", "parse_unified",
    "unified_diff", "TestCase", "parse_report_lines", "summarize",
]
