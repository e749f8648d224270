"""Label provenance: which labeler, model, prompts and taxonomy produced a labels file, and when."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from swetrain.label.taxonomy import Taxonomy

TAXONOMY_FILES = ("task_type.yaml", "domain.yaml", "scale.yaml", "aux.yaml")


def taxonomy_hash(taxonomy: Taxonomy | str | Path) -> str:
    """SHA-256 (first 16 hex digits) over the four definition files, in a fixed order."""
    directory = Path(taxonomy.directory if isinstance(taxonomy, Taxonomy) else taxonomy)
    h = hashlib.sha256()
    for name in TAXONOMY_FILES:
        path = directory / name
        h.update(name.encode() + b"\x00" + (path.read_bytes() if path.exists() else b"<missing>") + b"\x00")
    return h.hexdigest()[:16]


def provenance(backend: Any, taxonomy: Taxonomy) -> dict[str, Any]:
    """The provenance record written into every row of a labels file (``label_provenance``)."""
    try:
        from importlib.metadata import version

        swetrain_version = version("swetrain")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        swetrain_version = "unknown"
    rec: dict[str, Any] = {
        "backend": getattr(backend, "name", type(backend).__name__),
        "backend_version": getattr(backend, "version", "unknown"),
        "swetrain_version": swetrain_version,
        "taxonomy_sha256": taxonomy_hash(taxonomy),
        "labeled_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    extra = getattr(backend, "provenance", None)
    if callable(extra):
        rec.update(extra())
    return rec
