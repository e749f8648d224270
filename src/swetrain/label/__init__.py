"""swetrain.label: taxonomy definition files and audit, the two-stage Labeler, adapters, routing.

Heavy dependencies (torch/transformers for the offline embedding model) load only when used.
"""

from swetrain.label.adapters import Evidence, EvidenceError, from_issue_change, from_trajectory
from swetrain.label.labeler import Labeler
from swetrain.label.routing import ROUTE_WHITELIST, UNASSIGNED_L1, route_of
from swetrain.label.schema import Labels, LabelValidationError, check_labels, validate_labels
from swetrain.label.taxonomy import Taxonomy, TaxonomyError, audit_dir, default_taxonomy

__all__ = [
    "Evidence", "EvidenceError", "Labeler", "Labels", "LabelValidationError", "ROUTE_WHITELIST", "Taxonomy",
    "TaxonomyError", "UNASSIGNED_L1", "audit_dir", "check_labels", "default_taxonomy", "from_issue_change",
    "from_trajectory", "route_of", "validate_labels",
]
