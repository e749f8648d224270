from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.taxonomy import RECORD_FIELDS, Taxonomy, TaxonomyError, audit_dir


def _edit(path: Path, fn) -> None:
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_packaged_taxonomy_passes_audit_with_paper_counts(taxonomy: Taxonomy) -> None:
    report = audit_dir()
    assert report.violations == []
    assert report.counts["task_type_l1"] == 26 and report.counts["task_type_l2"] == 119
    assert report.counts["domain_l1"] == 21 and report.counts["domain_l2"] == 108
    assert report.counts["scale_levels"] == 12 and report.counts["decision_records"] == 239
    assert taxonomy.levels("scope") == ("single_file", "multi_file_same_module", "cross_module", "cross_repo")
    assert taxonomy.levels("complexity") == ("mechanical", "local_reasoning", "global_reasoning", "design_decision")
    assert taxonomy.levels("time") == ("trivial_15min", "small_1h", "medium_4h", "large_4h_plus")
    assert len(taxonomy.aux.code_languages) == 21 and {"other", "unknown"} <= set(taxonomy.aux.code_languages)


def test_every_record_has_six_fields_and_every_l1_a_source(taxonomy: Taxonomy) -> None:
    for rec in taxonomy.records():
        for f in RECORD_FIELDS:
            assert getattr(rec, f), (rec.qualified, f)
    for axis in ("task_type", "domain"):
        for fam in taxonomy.families(axis).values():
            assert fam.source_framework.strip()
    # the paper's worked examples are present with their neighbours
    bug = taxonomy.family("task_type", "bug-fix")
    assert {"logic_error", "off_by_one", "state_corruption"} <= set(bug.child_names)
    assert "off_by_one" in bug.child("logic_error").boundaries
    ref = taxonomy.family("task_type", "refactor")
    assert {"api_signature_refactor", "extract_method", "rename_symbol"} <= set(ref.child_names)
    sec = taxonomy.family("domain", "security_auth")
    assert {"identity_lifecycle", "oauth_oidc", "rbac_acl", "crypto_impl"} <= set(sec.child_names)
    assert "scientific_numerical" in taxonomy.family("domain", "data_science").child_names
    # some L1 have no children (they return "unspecified")
    assert any(not f.children for f in taxonomy.families("task_type").values())
    assert not taxonomy.family("domain", "other").children


def test_duplicate_l2_name_is_a_violation(taxonomy_copy: Path) -> None:
    def dup(d):
        fam = d["families"][1]
        fam["children"].append(dict(d["families"][0]["children"][0]))
    _edit(taxonomy_copy / "task_type.yaml", dup)
    report = audit_dir(taxonomy_copy)
    assert any("duplicate L2 name 'logic_error'" in v for v in report.violations)
    assert any("expected 119 L2" in v for v in report.violations)
    with pytest.raises(TaxonomyError, match="duplicate L2"):
        Taxonomy.load(taxonomy_copy)


def test_duplicate_l1_name_is_a_violation(taxonomy_copy: Path) -> None:
    _edit(taxonomy_copy / "domain.yaml", lambda d: d["families"][1].__setitem__("name", d["families"][0]["name"]))
    assert any("duplicate L1 name 'web_frontend'" in v for v in audit_dir(taxonomy_copy).violations)


def test_l2_under_undeclared_l1_is_a_violation(taxonomy_copy: Path) -> None:
    rec = {"name": "quantum_stuff", "parent": "quantum", "source": "s", "source_concept": "c", "rule": "r", "signals": ["q"], "boundaries": "b"}
    _edit(taxonomy_copy / "domain.yaml", lambda d: d.__setitem__("labels", [rec]))
    assert any("names parent 'quantum', which is not a declared L1" in v for v in audit_dir(taxonomy_copy).violations)


def test_flat_label_under_declared_l1_is_accepted(taxonomy_copy: Path) -> None:
    def add(d):
        d["labels"] = [{"name": "quantum_computing", "parent": "data_science", "source": "ACM CCS", "source_concept": "c",
                        "rule": "r", "signals": ["qubit"], "boundaries": "b"}]
        d["expected"]["l2"] = 109
    _edit(taxonomy_copy / "domain.yaml", add)
    tx = Taxonomy.load(taxonomy_copy)
    assert "quantum_computing" in tx.family("domain", "data_science").child_names


@pytest.mark.parametrize("field", RECORD_FIELDS)
def test_missing_record_field_is_a_violation(taxonomy_copy: Path, field: str) -> None:
    _edit(taxonomy_copy / "task_type.yaml", lambda d: d["families"][0]["children"][0].pop(field))
    violations = audit_dir(taxonomy_copy).violations
    assert any(f"missing field {field!r}" in v for v in violations), violations


def test_missing_source_framework_and_bad_scale_are_violations(taxonomy_copy: Path) -> None:
    _edit(taxonomy_copy / "domain.yaml", lambda d: d["families"][3].pop("source_framework"))
    _edit(taxonomy_copy / "scale.yaml", lambda d: d["dimensions"][0]["levels"].pop())
    _edit(taxonomy_copy / "aux.yaml", lambda d: d["code_language"]["values"].remove("unknown"))
    v = audit_dir(taxonomy_copy).violations
    assert any("L1 'web_backend'" in x and "missing field 'source_framework'" in x for x in v)
    assert any("must have 4 ordered levels" in x for x in v)
    assert any("must include 'unknown'" in x for x in v)


def test_bad_regex_signal_and_reserved_name(taxonomy_copy: Path) -> None:
    def bad(d):
        d["families"][0]["children"][0]["signals"] = ["(unclosed"]
        d["families"][0]["children"][1]["name"] = "unspecified"
    _edit(taxonomy_copy / "task_type.yaml", bad)
    v = audit_dir(taxonomy_copy).violations
    assert any("not a valid regular expression" in x for x in v)
    assert any("'unspecified' is reserved" in x for x in v)


def test_cli_audit_exit_codes(taxonomy_copy: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["label", "audit"])
    assert ok.exit_code == 0, ok.output
    assert "119" in ok.output and "108" in ok.output and "audit OK" in ok.output
    _edit(taxonomy_copy / "task_type.yaml", lambda d: d["families"][0]["children"][0].pop("boundaries"))
    bad = runner.invoke(app, ["label", "audit", "--dir", str(taxonomy_copy)])
    assert bad.exit_code == 1
    assert "missing field 'boundaries'" in bad.output


def test_unreadable_yaml_is_reported(taxonomy_copy: Path) -> None:
    (taxonomy_copy / "scale.yaml").write_text("dimensions: [unclosed\n")
    assert any("not valid YAML" in v for v in audit_dir(taxonomy_copy).violations)
