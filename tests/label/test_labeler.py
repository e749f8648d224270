from __future__ import annotations

import string

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swetrain.label.adapters import from_issue_change, from_trajectory
from swetrain.label.labeler import FALLBACK_MARK, Labeler
from swetrain.label.offline import OfflineBackend, Stage1, Stage2
from swetrain.label.schema import LabelValidationError, check_labels, validate_labels
from swetrain.label.taxonomy import UNSPECIFIED

from label_testdata import ROWS, _trajectory


def test_signals_only_labels_are_valid_and_sensible(taxonomy) -> None:
    lab = Labeler("offline", taxonomy=taxonomy, use_embeddings=False)
    out = lab.label_rows(ROWS)
    for row, src in zip(out, ROWS):
        assert check_labels(row["labels"], taxonomy) == []
        assert {k: row[k] for k in src} == src  # input fields kept
        assert row["route"] in ("A", "B", "C", None)
    first = out[0]["labels"]
    assert first["task_type"]["l1"] == "bug-fix" and "off_by_one" in first["task_type"]["l2"]
    assert first["scope"] == "single_file" and first["code_language"] == "python"
    assert first["task_spec_type"] == "specific"
    assert out[1]["labels"]["task_type"]["l1"] == "feature"
    assert out[1]["labels"]["domain"]["l1"] == "cms_ecommerce" and out[1]["route"] == "B"
    assert out[2]["labels"]["task_type"]["l1"] == "user-docs"
    assert out[3]["labels"]["code_language"] == "c"
    assert out[3]["labels"]["domain"]["l1"] == "database_storage"
    # domain fallback is marked only when metadata is missing
    assert out[0]["labels"]["domain"]["rationale"].startswith(FALLBACK_MARK)
    assert FALLBACK_MARK not in out[1]["labels"]["domain"]["rationale"]
    assert "stage 1:" in first["task_type"]["rationale"] and "stage 2:" in first["task_type"]["rationale"]


@pytest.mark.slow
def test_embedding_backend_valid_and_issue_vs_trajectory_comparable(taxonomy, embedder) -> None:
    lab = Labeler(OfflineBackend(taxonomy, embedder=embedder), taxonomy=taxonomy)
    ic = lab.label(from_issue_change(ROWS[0]))
    tr = lab.label(from_trajectory(_trajectory()))
    assert check_labels(ic, taxonomy) == [] and check_labels(tr, taxonomy) == []
    assert ic.task_type.l1 == tr.task_type.l1 == "bug-fix"
    assert ic.domain.l1 == tr.domain.l1 and ic.scope == tr.scope
    assert "similarity" in ic.task_type.rationale
    vecs = embedder.encode(["a", "a longer sentence about databases"])
    assert vecs.shape == (2, 384)
    assert abs(float((vecs**2).sum(1)[1]) - 1.0) < 1e-4


def test_l1_without_children_returns_unspecified(taxonomy) -> None:
    lab = Labeler("offline", taxonomy=taxonomy, use_embeddings=False)
    row = {"instance_id": "e", "repo": "acme/x", "problem_statement": "Please explain what does this function do and walk through how does it work."}
    labels = lab.label(from_issue_change(row))
    assert labels.task_type.l1 == "code-explanation" and labels.task_type.l2 == [UNSPECIFIED]
    assert labels.code_language == "unknown" and labels.dependency_context == "none"


def test_repository_pooling_makes_domain_consistent(taxonomy) -> None:
    rows = [
        {"instance_id": "p1", "repo": "acme/storefront", "problem_statement": "Checkout of the cart fails for orders with payment by invoice."},
        {"instance_id": "p2", "repo": "acme/storefront", "problem_statement": "The product catalog shows the wrong price in the cart."},
        {"instance_id": "p3", "repo": "acme/storefront", "problem_statement": "Sorting helper returns items in wrong order."},
    ]
    pooled = Labeler("offline", taxonomy=taxonomy, use_embeddings=False).label_rows(rows)
    assert {r["labels"]["domain"]["l1"] for r in pooled} == {"cms_ecommerce"}
    assert "repository profile over 3 tasks" in pooled[2]["labels"]["domain"]["rationale"]
    alone = Labeler("offline", taxonomy=taxonomy, use_embeddings=False, pool_repositories=False).label_rows(rows)
    assert alone[2]["labels"]["domain"]["l1"] != "cms_ecommerce"


class _BadBackend:
    """A backend that proposes an L2 outside the chosen L1: the Labeler must refuse it."""

    name = "bad"

    def stage1(self, evs):
        return [Stage1("bug-fix", "web_backend", "python", "specific", "codebase") for _ in evs]

    def stage2(self, evs, s1):
        return [Stage2(["extract_method"], ["orm_models"], "single_file", "mechanical", "trivial_15min") for _ in evs]


def test_output_is_validated_against_the_hierarchy(taxonomy) -> None:
    lab = Labeler(_BadBackend(), taxonomy=taxonomy)
    try:
        lab.label(from_issue_change(ROWS[0]))
    except LabelValidationError as exc:
        assert "'extract_method' is not a child of 'bug-fix'" in str(exc)
    else:
        raise AssertionError("invalid L2 was accepted")
    good = {"task_type": {"l1": "diagram", "l2": ["unspecified"]}, "domain": {"l1": "other", "l2": ["unspecified"]},
            "scope": "single_file", "complexity": "mechanical", "time": "small_1h", "code_language": "go",
            "task_spec_type": "fuzzy", "dependency_context": "none"}
    assert validate_labels(good, taxonomy).task_type.l1 == "diagram"
    bad = {**good, "domain": {"l1": "other", "l2": ["kv_store"]}, "time": "1h", "task_spec_type": "vague"}
    problems = check_labels(bad, taxonomy)
    assert any("no children" in p for p in problems) and any("time '1h'" in p for p in problems)
    assert any("task_spec_type" in p for p in problems)
    assert check_labels({**good, "task_type": {"l1": "bug-fix", "l2": []}}, taxonomy)


_LABELERS: dict[int, Labeler] = {}


def _signals_labeler(taxonomy) -> Labeler:
    if id(taxonomy) not in _LABELERS:
        _LABELERS[id(taxonomy)] = Labeler("offline", taxonomy=taxonomy, use_embeddings=False)
    return _LABELERS[id(taxonomy)]


_words = st.text(alphabet=string.ascii_letters + string.digits + " .,:()`'\n-_/", min_size=1, max_size=300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statement=_words, repo=st.from_regex(r"[a-z]{1,8}/[a-z\-]{1,10}", fullmatch=True),
       patch=st.sampled_from(["", ROWS[0]["patch"], ROWS[2]["patch"]]), desc=st.sampled_from(["", "a web framework", "game engine"]))
def test_offline_labels_always_valid(taxonomy, statement, repo, patch, desc) -> None:
    lab = _signals_labeler(taxonomy)
    row = {"instance_id": "h", "repo": repo, "problem_statement": statement + " x", "patch": patch, "repo_description": desc}
    assert check_labels(lab.label(from_issue_change(row)), taxonomy) == []
