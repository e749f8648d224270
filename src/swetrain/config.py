"""Loading pydantic-validated configs: the one helper of ``swetrain train``, ``swetrain experts``,
``swetrain eval`` and ``swetrain curriculum``.

A config is built from *layers* merged in order (a built-in recipe or preset, a YAML file, explicit
values), then dotted ``a.b=c`` overrides (values parsed as YAML scalars), then validated into a
pydantic model whose sections forbid unknown keys. Every problem is a :class:`ConfigError` that
names the dotted key and where the value came from::

    cfg = load_layers(TrainConfig, [("recipe fcswe", read_yaml(path))], config_file=f, overrides=["optim.lr=1e-4"])
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A recipe, preset, config file or override is invalid. The message names the key and the problem."""


class Section(BaseModel):
    """A config section: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def read_yaml(path: Path) -> dict[str, Any]:
    """The top-level mapping of a YAML config file ({} when empty); ConfigError names the file otherwise."""
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def deep_merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Recursively merge ``update`` into a copy of ``base`` (mappings merge, other values replace)."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"a.b.c=value"`` -> (["a","b","c"], value parsed as a YAML scalar/flow value)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r}: expected key=value (e.g. optim.lr=1e-4)")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r}: empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply dotted ``key=value`` overrides; unknown keys are rejected by validation later."""
    out = copy.deepcopy(data)
    for text in overrides:
        parts, value = parse_override(text)
        node = out
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = {}
                node[part] = child
            if not isinstance(child, dict):
                raise ConfigError(
                    f"override {text!r}: {'.'.join(parts[: i + 1])} is a value ({child!r}), not a section"
                )
            node = child
        node[parts[-1]] = value
    return out


def format_validation_error(exc: ValidationError, origin: str, what: str = "training config") -> str:
    """One line per problem, each naming its dotted key (``rollout.top_k: ...``)."""
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "<root>"
        if err["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown key")
        else:
            got = err.get("input")
            shown = "" if isinstance(got, dict) else f" (got {got!r})"
            lines.append(f"{key}: {err['msg']}{shown}")
    return f"invalid {what} ({origin}):\n  " + "\n  ".join(lines)


def validate_as(model: type[M], data: dict[str, Any], origin: str, what: str,
                error: type[ConfigError] = ConfigError) -> M:
    """``model`` validated from ``data``; ``error`` (one line per problem) otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(format_validation_error(exc, origin, what)) from None


def preset_layer(presets: Mapping[str, Mapping[str, Any]], name: str, flag: str = "--preset",
                 error: type[ConfigError] = ConfigError) -> tuple[str, dict[str, Any]]:
    """The layer of preset ``name`` (``(origin, values)``); ``error`` names ``flag`` and the choices."""
    if name not in presets:
        raise error(f"{flag}: unknown preset {name!r}; choose one of {', '.join(presets)}")
    return f"preset {name}", dict(presets[name])


def load_layers(
    model: type[M],
    layers: Iterable[tuple[str, Mapping[str, Any]]] = (),
    *,
    config_file: str | Path | None = None,
    overrides: Iterable[str] | None = None,
    what: str = "config",
    error: type[ConfigError] = ConfigError,
) -> M:
    """``layers`` (``(origin, values)``, merged in order), then ``config_file`` merged on top, then
    dotted ``key=value`` ``overrides``; validated into ``model``. Errors name the dotted key and
    every layer that was applied."""
    data: dict[str, Any] = {}
    origin = []
    for name, values in layers:
        data = deep_merge(data, values)
        origin.append(name)
    if config_file:
        data = deep_merge(data, read_yaml(Path(config_file)))
        origin.append(f"file {config_file}")
    overrides = list(overrides or [])
    if overrides:
        data = apply_overrides(data, overrides)
        origin.append("overrides " + " ".join(overrides))
    return validate_as(model, data, ", ".join(origin) or "defaults", what, error)
