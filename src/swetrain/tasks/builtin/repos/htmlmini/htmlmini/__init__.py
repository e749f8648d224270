"""htmlmini: HTML escaping, element builders and a small auto-escaping template engine."""
from .escape import escape, strip_tags, unescape
from .elements import Markup, class_names, element, render_attrs, style_string
from .template import Template, TemplateError, render

__all__ = [
    "escape", "strip_tags", "unescape", "Markup", "class_names", "element", "render_attrs",
    "style_string", "Template", "TemplateError", "render",
]
