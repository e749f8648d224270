"""The label record written into each task row, and its validation against the hierarchy."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from swetrain.label.taxonomy import SCALE_DIMENSIONS, UNSPECIFIED, Taxonomy


class LabelValidationError(ValueError):
    """A label record violates the declared hierarchy or admissible values (lists every problem)."""

    def __init__(self, problems: list[str], where: str = "labels"):
        self.problems = problems
        super().__init__(f"{where}: " + "; ".join(problems))


class AxisLabel(BaseModel):
    """One semantic axis: primary L1, 1-3 L2 children (or ["unspecified"]) and the rationale."""

    model_config = ConfigDict(extra="forbid")
    l1: str
    l2: list[str] = Field(min_length=1, max_length=3)
    rationale: str = ""


class Labels(BaseModel):
    """The annotation z(x): two semantic axes, three scale levels and auxiliary metadata."""

    model_config = ConfigDict(extra="forbid")
    task_type: AxisLabel
    domain: AxisLabel
    scope: str
    complexity: str
    time: str
    code_language: str
    task_spec_type: str
    dependency_context: str

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def check_axis_label(al: AxisLabel | dict[str, Any], axis: str, taxonomy: Taxonomy) -> list[str]:
    """Every problem of one semantic axis label (``task_type`` or ``domain``): unknown L1, L2 not a child of it."""
    if isinstance(al, dict):
        try:
            al = AxisLabel.model_validate(al)
        except ValidationError as exc:
            return [f"{axis}.{'.'.join(map(str, e['loc'])) or 'label'}: {e['msg']}" for e in exc.errors()]
    fams = taxonomy.families(axis)
    if al.l1 not in fams:
        return [f"{axis}.l1 {al.l1!r} is not a declared L1"]
    problems = []
    kids = fams[al.l1].child_names
    if len(set(al.l2)) != len(al.l2):
        problems.append(f"{axis}.l2 has duplicates: {al.l2}")
    if UNSPECIFIED in al.l2 and len(al.l2) > 1:
        problems.append(f"{axis}.l2: {UNSPECIFIED!r} cannot be combined with other labels")
    for l2 in al.l2:
        if l2 != UNSPECIFIED and l2 not in kids:
            problems.append(f"{axis}.l2 {l2!r} is not a child of {al.l1!r}" + (" (it has no children: use 'unspecified')" if not kids else ""))
    return problems


def check_labels(labels: Labels | dict[str, Any], taxonomy: Taxonomy) -> list[str]:
    """Every problem of a label record: unknown L1, L2 not a child of its L1, bad scale/aux values."""
    if isinstance(labels, dict):
        try:
            labels = Labels.model_validate(labels)
        except ValidationError as exc:
            return [f"{'.'.join(map(str, e['loc'])) or 'labels'}: {e['msg']}" for e in exc.errors()]
    problems: list[str] = []
    for axis in ("task_type", "domain"):
        problems += check_axis_label(getattr(labels, axis), axis, taxonomy)
    for dim in SCALE_DIMENSIONS:
        value = getattr(labels, dim)
        if value not in taxonomy.levels(dim):
            problems.append(f"{dim} {value!r} is not one of {list(taxonomy.levels(dim))}")
    aux = taxonomy.aux
    for field, allowed in (("code_language", aux.code_languages), ("task_spec_type", aux.task_spec_types), ("dependency_context", aux.dependency_contexts)):
        value = getattr(labels, field)
        if value not in allowed:
            problems.append(f"{field} {value!r} is not one of {list(allowed)}")
    return problems


def validate_labels(labels: Labels | dict[str, Any], taxonomy: Taxonomy, where: str = "labels") -> Labels:
    """Return the validated :class:`Labels` or raise :class:`LabelValidationError`."""
    problems = check_labels(labels, taxonomy)
    if problems:
        raise LabelValidationError(problems, where)
    return labels if isinstance(labels, Labels) else Labels.model_validate(labels)
