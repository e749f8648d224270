"""Fixtures for the label tests: the packaged taxonomy and one embedding model per session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from swetrain.label.taxonomy import DEFAULT_DIR, Taxonomy


@pytest.fixture(scope="session")
def taxonomy() -> Taxonomy:
    return Taxonomy.load()


@pytest.fixture(scope="session")
def embedder():
    """The packaged MiniLM model, loaded once for the whole session."""
    import torch

    from swetrain.label.embed import EmbeddingUnavailable, shared_embedder

    torch.set_num_threads(1)
    try:
        return shared_embedder()
    except EmbeddingUnavailable as exc:  # the optional dependency is documented; say what is missing
        pytest.skip(str(exc))


@pytest.fixture()
def taxonomy_copy(tmp_path: Path) -> Path:
    """A writable copy of the packaged definition files."""
    target = tmp_path / "taxonomy"
    shutil.copytree(DEFAULT_DIR, target)
    return target
