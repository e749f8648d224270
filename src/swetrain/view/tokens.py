"""The run's tokenizer, found from what the run records, and the text of each token id.

Only an existing ``tokenizer.json`` is used (read with the ``tokenizers`` library: no model is
built, nothing is downloaded). Where one is looked for, in order: ``--tokenizer``; the run's latest
checkpoint (``checkpoints/latest.json`` -> ``.../model``); the policy the run names
(``config.yaml``'s ``policy``, ``summary.json``'s checkpoints, ``rollout.json``/``eval.json``'s
``policy``: a model folder, ``tiny-sft``, or ``tiny``/``scripted*`` = the tiny model's tokenizer when
it is built); any ``tokenizer.json`` inside the run. Without one the page shows the ids.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swetrain.view.load import Run

#: end-of-turn tokens: a generated turn that does not end with one was cut (length, limit)
END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|endoftext|>", "</s>", "<|end|>", "<end_of_turn>")


@dataclass
class Vocab:
    path: str | None = None
    how: str = ""
    tokenizer: Any = None
    end_ids: list[int] = field(default_factory=list)
    size: int = 0
    _cache: dict[int, str] = field(default_factory=dict)

    def text(self, ids: set[int] | list[int]) -> dict[int, str]:
        """id -> display text for ``ids`` (decoded one id at a time; a piece of a multi-byte
        character falls back to the raw token)."""
        out = {}
        for i in ids:
            t = self._cache.get(i)
            if t is None:
                t = _decode(self.tokenizer, i) if self.tokenizer is not None and 0 <= i < self.size else None
                self._cache[i] = t if t is not None else ""
                t = self._cache[i]
            if t != "" or self.tokenizer is not None:
                out[i] = t
        return out


def _decode(tok: Any, i: int) -> str | None:
    try:
        s = tok.decode([i], skip_special_tokens=False)
    except Exception:  # noqa: BLE001
        s = None
    if not s or "\ufffd" in s:
        raw = tok.id_to_token(i)
        if raw is not None:
            return raw
    return s


def _load(path: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


def _tokenizer_file(p: Path) -> Path | None:
    if p.is_file() and p.name == "tokenizer.json":
        return p
    if (p / "tokenizer.json").is_file():
        return p / "tokenizer.json"
    if (p / "model" / "tokenizer.json").is_file():
        return p / "model" / "tokenizer.json"
    return None


def _from_spec(spec: str, base: Path) -> Path | None:
    """A tokenizer file for a policy spec, only when it already exists on disk."""
    spec = str(spec).strip()
    if not spec:
        return None
    body = spec.split(":", 1)[1] if spec.startswith("hf:") else spec
    p = Path(body)
    for cand in (p, base / p):
        try:
            f = _tokenizer_file(cand)
        except OSError:
            f = None
        if f:
            return f
    name = spec.split(":", 1)[0]
    if name in ("scripted", "scripted-repair", "tiny"):
        parts = spec.split(":")
        if name == "scripted" and len(parts) == 3:  # scripted:NAME:TOKENIZER_DIR
            f = _tokenizer_file(Path(parts[2]))
            if f:
                return f
        try:
            from swetrain.policy.tiny import default_tiny_path, is_built

            tp = default_tiny_path()
            if is_built(tp):
                return _tokenizer_file(tp)
        except Exception:  # noqa: BLE001
            pass
        name = "tiny-sft"  # same vocabulary as the tiny model it was trained from
    if name in ("tiny-sft", "tiny-sft-build"):
        from swetrain.view.load import package_dir

        tiny = package_dir("swetrain.recipes")  # the shipped checkpoint's folder, nothing imported
        f = _tokenizer_file(tiny / "tiny" / "data" / "tiny-sft") if tiny else None
        if f:
            return f
    return None


def _run_level(root: Path, whose: str) -> list[tuple[Path, str]]:
    """Tokenizers a (train or quickstart) run folder names: its latest checkpoint, its config's
    policy, its summary's checkpoints."""
    out: list[tuple[Path, str]] = []
    pointer = root / "checkpoints" / "latest.json"
    if pointer.is_file():
        try:
            name = json.loads(pointer.read_text())["path"]
            f = _tokenizer_file(root / "checkpoints" / name)
            if f:
                out.append((f, f"{whose} latest checkpoint"))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    cfg = root / "config.yaml"
    if cfg.is_file():
        m = re.search(r"^policy:\s*['\"]?([^'\"\n#]+?)['\"]?\s*(#.*)?$", cfg.read_text(errors="replace"), re.M)
        if m:
            f = _from_spec(m.group(1), root)
            if f:
                out.append((f, f"{whose} config.yaml's policy {m.group(1)!r}"))
    summ_path = root / "summary.json"
    if summ_path.is_file():
        try:
            summ = json.loads(summ_path.read_text())
        except (OSError, ValueError):
            summ = None
        if isinstance(summ, dict):
            for key in ("trained_checkpoint", "base_checkpoint", "policy"):
                if summ.get(key):
                    f = _from_spec(str(summ[key]), root)
                    if f:
                        out.append((f, f"{whose} summary.json's {key}"))
    return out


def _candidates(run: Run) -> list[tuple[Path, str]]:
    root = run.root
    out = _run_level(root, "the run's")
    for name, getter in (("rollout.json", lambda o: (o.get("result") or {}).get("policy")), ("eval.json", lambda o: o.get("policy"))):
        obj = run.json_records.get(name)
        if isinstance(obj, dict):
            try:
                spec = getter(obj)
            except AttributeError:
                spec = None
            if isinstance(spec, dict):
                spec = spec.get("spec") or spec.get("name")
            if spec:
                f = _from_spec(str(spec), root)
                if f:
                    out.append((f, f"{name}'s policy {spec!r}"))
    for src in run.sources:
        for rec in ("rollout.json", "eval.json"):
            p = src.dir / rec
            if p.is_file() and src.name != ".":
                try:
                    o = json.loads(p.read_text())
                    spec = (o.get("result") or {}).get("policy") if rec == "rollout.json" else o.get("policy")
                except (OSError, ValueError, AttributeError):
                    spec = None
                if isinstance(spec, str):
                    f = _from_spec(spec, root)
                    if f:
                        out.append((f, f"{src.name}/{rec}'s policy {spec!r}"))
    for f in sorted(root.rglob("tokenizer.json"))[:5]:
        out.append((f, "a tokenizer inside the run"))
    for parent in list(root.parents)[:2]:  # a phase of a quickstart or experts run (eval_before/, ...)
        out.extend(_run_level(parent, f"the enclosing run {parent.name}'s"))
    return out


def find_vocab(run: Run, override: str | None = None, max_id: int | None = None) -> Vocab:
    """The run's tokenizer (see the module docstring), or an empty Vocab (the page shows ids)."""
    cands: list[tuple[Path, str]] = []
    if override:
        f = _tokenizer_file(Path(override)) or _from_spec(override, Path.cwd())
        if f is None:
            from swetrain.view.load import ViewError

            raise ViewError(f"--tokenizer {override}: no tokenizer.json there")
        cands.append((f, "--tokenizer"))
    else:
        cands = _candidates(run)
    tried = set()
    for f, how in cands:
        if f in tried:
            continue
        tried.add(f)
        try:
            tok = _load(f)
        except Exception as exc:  # noqa: BLE001
            run.notes.append(f"tokenizer {f}: could not be read ({type(exc).__name__}); tried the next")
            continue
        size = tok.get_vocab_size(with_added_tokens=True)
        if max_id is not None and max_id >= size:
            run.notes.append(f"tokenizer {f} ({how}) has {size} ids but the run holds id {max_id}; not used")
            continue
        ends = [i for i in (tok.token_to_id(t) for t in END_TOKENS) if i is not None]
        return Vocab(path=str(f), how=how, tokenizer=tok, end_ids=ends, size=size)
    run.notes.append("no tokenizer found for this run (give --tokenizer DIR): tokens are shown as ids")
    return Vocab()
