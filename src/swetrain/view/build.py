"""From a run directory to the page's data: the run summary, the task table and the episodes.

One episode's record holds what the agent saw (messages, the failure context of attempt k > 1),
what it produced (the final diff), the verdict, and the tokens the trainer used: ids (text from the
run's tokenizer where found), the stored loss mask, segments, behaviour log-probs and, for a training
run, the advantage. The checks that make a broken record visible are made here, on the stored
arrays themselves: a mask that disagrees with the segments (off by one), trainable prompt tokens,
a generated turn that does not end with an end-of-turn token (cut), arrays of different lengths.
"""

from __future__ import annotations

import base64
import importlib
import math
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from swetrain.view.advantages import TrainInfo, is_train_source, train_advantages
from swetrain.view.load import INDEX_COLUMNS, Run, iter_rows, json_field, open_run, read_part, task_labels
from swetrain.view.tokens import Vocab, find_vocab

#: tokens of one episode put in the page (the first HEAD_SHARE and the last of it; a note says so)
DEFAULT_MAX_TOKENS = 24_000
HEAD_SHARE = 0.75
MAX_MESSAGE_CHARS = 60_000
PART_CACHE = 4  # parts kept in memory by --serve


@dataclass
class RunView:
    run: Run
    vocab: Vocab
    labels: dict[str, dict[str, Any]]
    index: list[dict[str, Any]] = field(default_factory=list)
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    train: dict[int, TrainInfo] = field(default_factory=dict)  # source index -> advantages
    ids_used: set[int] = field(default_factory=set)
    part_cache: dict[tuple[int, int], list[dict[str, Any]]] = field(default_factory=dict)  # --serve: last parts read


# ------------------------------------------------------------------------------------ entries
def _num(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def index_entry(key: str, run_no: int, src_name: str, row: dict[str, Any], labels: dict[str, dict[str, Any]],
                train: tuple[int, float | None, float | None] | None) -> dict[str, Any]:
    """One task-table row (an executed attempt)."""
    iid = str(row.get("instance_id"))
    lab = labels.get(iid, {})
    verdict = json_field(row.get("verdict"), {}) or {}
    timings = json_field(row.get("timings"), {}) or {}
    invalid = row.get("invalid")
    invalid = [] if invalid is None else invalid
    entry = {
        "key": key, "run": run_no, "src": src_name, "iid": iid,
        "chain": int(row.get("chain") or 0), "att": int(row.get("attempt") or 1),
        "res": bool(row.get("resolved")), "status": verdict.get("status") if isinstance(verdict, dict) else None,
        "stop": row.get("stop_reason") or "", "turns": int(row.get("num_turns") or 0),
        "inv": int(sum(bool(x) for x in invalid)),
        "itok": int(row.get("input_tokens") or 0), "otok": int(row.get("output_tokens") or 0),
        "wall": _num(round(float(timings.get("total_s", 0.0) or 0.0), 2)) if isinstance(timings, dict) else None,
        "seed": row.get("seed"), "pv": row.get("policy_version"), "ctx": row.get("context_variant"),
        "route": lab.get("route"), "cat": lab.get("category"), "kind": lab.get("kind"), "tier": lab.get("tier"),
    }
    if train is not None:
        entry["step"], entry["reward"], entry["adv"] = train[0], _num(train[1]), _num(train[2])
    return entry


def _rle(values: Any) -> list[list[int]]:
    """[[value, run length], ...] of a 1-D integer array."""
    v = np.asarray(values)
    if not len(v):
        return []
    starts = np.flatnonzero(np.concatenate([[True], v[1:] != v[:-1]]))
    lengths = np.diff(np.concatenate([starts, [len(v)]]))
    return [[int(a), int(b)] for a, b in zip(v[starts], lengths)]


def _array(value: Any, dtype: Any) -> np.ndarray:
    """A stored list column (numpy slice, list or None) as a 1-D array."""
    if value is None:
        return np.zeros(0, dtype=dtype)
    return np.asarray(value, dtype=dtype).reshape(-1)


def _fit(arr: np.ndarray, n: int) -> np.ndarray:
    """``arr`` cut or zero-padded to ``n`` entries (a misaligned record is shown, with its note)."""
    if len(arr) == n:
        return arr
    out = np.zeros(n, dtype=arr.dtype)
    out[: min(n, len(arr))] = arr[:n]
    return out


def _cap(text: Any) -> Any:
    if isinstance(text, str) and len(text) > MAX_MESSAGE_CHARS:
        cut = len(text) - MAX_MESSAGE_CHARS
        return text[: MAX_MESSAGE_CHARS // 2] + f"\n[... viewer: {cut} characters not shown ...]\n" + text[-MAX_MESSAGE_CHARS // 2:]
    return text


def episode_detail(row: dict[str, Any], vocab: Vocab, train: TrainInfo | None, train_row: tuple | None,
                   max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[dict[str, Any], set[int]]:
    """The episode record of one stored row, and the token ids it shows."""
    notes: list[str] = []
    messages = json_field(row.get("messages"), None)
    if messages is None and row.get("messages"):
        notes.append("messages column is not valid JSON; not shown")
    if not isinstance(messages, list):
        messages = []
    msgs = []
    for m in messages:
        if isinstance(m, dict):
            msgs.append({k: _cap(v) if k == "content" else v for k, v in m.items()})
    verdict = json_field(row.get("verdict"), None)
    ids = _array(row.get("token_ids"), np.int64)
    mask = _array(row.get("assistant_mask"), np.int64)
    seg = _array(row.get("segment_ids"), np.int64)
    lp = _array(row.get("behavior_logprobs"), np.float64)
    n = len(ids)
    for name, arr in (("assistant_mask", mask), ("segment_ids", seg), ("behavior_logprobs", lp)):
        if len(arr) != n:
            notes.append(f"{name} has {len(arr)} entries for {n} token ids (misaligned record)")
    mask, seg, lp = _fit(mask, n), _fit(seg, n), _fit(lp, n)
    prompt_len = int(row.get("prompt_len") or 0)
    # checks on the stored arrays (what the trainer used)
    disagree = np.flatnonzero((mask == 1) != (seg > 0))
    if len(disagree):
        notes.append(f"loss mask disagrees with the segments on {len(disagree)} token(s), first at position {int(disagree[0])} "
                     "(a mask off by one?)")
    in_prompt = int(np.count_nonzero(mask[: min(prompt_len, n)]))
    if in_prompt:
        notes.append(f"{in_prompt} prompt token(s) are marked trainable")
    invalid = [bool(x) for x in _array(row.get("invalid"), bool)]
    reasons = json_field(row.get("invalid_reasons"), []) or []
    segments: list[dict[str, Any]] = []
    ends = set(vocab.end_ids)
    finish = {str(m.get("turn")): m.get("finish_reason") for m in msgs if m.get("role") == "assistant"}
    pos = np.flatnonzero(seg > 0)
    for s in (int(v) for v in np.unique(seg[pos])):
        where = pos[seg[pos] == s]
        a, b, count = int(where[0]), int(where[-1]), len(where)
        seg_info = {"seg": s, "start": a, "end": b, "tokens": count,
                    "invalid": bool(invalid[s - 1]) if s - 1 < len(invalid) else False,
                    "reasons": reasons[s - 1] if isinstance(reasons, list) and s - 1 < len(reasons) else [],
                    "finish": finish.get(str(s))}
        if count != b - a + 1:
            notes.append(f"turn {s}: its tokens are not contiguous ({count} tokens over positions {a}..{b})")
        if ends:
            seg_info["eot"] = int(ids[b]) in ends
            if not seg_info["eot"]:
                seg_info["cut"] = True
        segments.append(seg_info)
    cut_turns = [s["seg"] for s in segments if s.get("cut")]
    if cut_turns:
        notes.append(f"turn(s) {', '.join(map(str, cut_turns))} end without an end-of-turn token (cut by a length limit?)")
    # tokens shown
    gap = None
    if n > max_tokens:
        head = int(max_tokens * HEAD_SHARE)
        tail = max_tokens - head
        shown = np.concatenate([np.arange(head), np.arange(n - tail, n)])
        ids, mask, seg, lp = ids[shown], mask[shown], seg[shown], lp[shown]
        gap = {"at": head, "skipped": n - head - tail}
        notes.append(f"episode has {n} tokens: the page shows the first {head} and the last {tail} (--max-tokens)")
    digits = np.where((mask >= 0) & (mask <= 9), mask + 48, 63).astype(np.uint8)  # '0'..'9', '?' otherwise
    shown_ids = ids.tolist()
    tokens: dict[str, Any] = {
        "n": n, "prompt_len": prompt_len, "ids": shown_ids,
        "mask": digits.tobytes().decode("ascii"),
        "seg": _rle(seg),
        "lp": np.round(lp, 3).tolist() if np.any(lp != 0.0) else None,
        "gap": gap, "segments": segments,
    }
    if train is not None and train_row is not None:
        step, reward, adv = train_row
        tokens.update({"step": step, "reward": _num(reward), "adv": _num(adv), "penalty": train.penalty,
                       "adv_note": train.token_note or None})
        if adv is None:
            tokens["adv_note"] = "not in the trainer's batch (no reward: its task had a chain given up)"
    detail = {
        "context": row.get("context"), "messages": msgs, "patch": _cap(row.get("patch") or ""), "verdict": verdict,
        "timings": json_field(row.get("timings"), {}), "tokens": tokens, "notes": notes,
    }
    return detail, set(shown_ids)


# ------------------------------------------------------------------------------------ whole runs
def rk_recount(index: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Resolved@k and conditional recovery of each store, recounted from its rows
    (``swetrain.eval.metrics``; chains as samples, like ``rollout.summarize``)."""
    from swetrain.eval import metrics as M

    out = []
    by_src: dict[str, list[dict[str, Any]]] = {}
    for e in index:
        by_src.setdefault(e["src"], []).append(e)
    for src, rows in by_src.items():
        recs = [SimpleNamespace(instance_id=e["iid"], chain=e["chain"], attempt=e["att"], resolved=e["res"]) for e in rows]
        try:
            y, tasks = M.outcome_matrix(recs)
            curve = M.resolved_curve(y)
            rec = M.conditional_recovery(y) if y.shape[2] > 1 else None
        except Exception:  # noqa: BLE001
            continue
        entry = {"source": src, "tasks": len(tasks), "chains": len({(e["iid"], e["chain"]) for e in rows}),
                 "episodes": len(rows), "resolved_episodes": sum(e["res"] for e in rows)}
        entry.update({f"resolved@{k + 1}": round(v, 4) for k, v in enumerate(curve)})
        if rec is not None and math.isfinite(rec):
            entry["conditional_recovery"] = round(rec, 4)
        out.append(entry)
    return out


def _train_infos(run: Run, rows_by_src: dict[int, list[tuple[int, int, dict[str, Any]]]]) -> dict[int, TrainInfo]:
    out = {}
    for si, src in enumerate(run.sources):
        if is_train_source(src) and rows_by_src.get(si):
            info = train_advantages(run, src, rows_by_src[si])
            if info is not None:
                out[si] = info
    return out


def build_run(path: Any, *, run_no: int = 0, tokenizer: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
              details: bool = True) -> RunView:
    """Read a whole run for the page: the index always, every episode's record when ``details``."""
    run = open_run(path)
    if any(is_train_source(src) for src in run.sources):
        # the trainer's advantage functions need torch (seconds to import): load it while the
        # parts are read
        threading.Thread(target=_import_trainer, daemon=True).start()
    labels = task_labels(run)
    columns = None if details else list(INDEX_COLUMNS)
    rows_by_src: dict[int, list[tuple[int, int, dict[str, Any]]]] = {}
    max_id = -1
    for si, pi, ri, row in iter_rows(run, columns):
        for name in ("verdict", "timings"):  # parsed once, used by the table and the episode
            if isinstance(row.get(name), str):
                row[name] = json_field(row[name], None)
        rows_by_src.setdefault(si, []).append((pi, ri, row))
        ids = row.get("token_ids")
        if ids is not None and len(ids):
            max_id = max(max_id, int(np.max(ids)))
    if not details:
        max_id = _max_id_sample(run)
    vocab = find_vocab(run, tokenizer, max_id if max_id >= 0 else None)
    view = RunView(run=run, vocab=vocab, labels=labels)
    view.train = _train_infos(run, rows_by_src)
    for si, items in rows_by_src.items():
        src = run.sources[si]
        info = view.train.get(si)
        for pi, ri, row in items:
            key = f"{run_no}:{si}:{pi}:{ri}"
            trow = info.rows.get((pi, ri)) if info else None
            view.index.append(index_entry(key, run_no, src.name, row, labels, trow))
            if details:
                detail, used = episode_detail(row, vocab, info, trow, max_tokens)
                view.episodes[key] = detail
                view.ids_used |= used
    return view


def _import_trainer() -> None:
    try:
        importlib.import_module("swetrain.train.update")
    except Exception:  # noqa: BLE001 - train_advantages imports it again and says what failed
        pass


def _max_id_sample(run: Run) -> int:
    """The largest token id of the first readable part (checks a tokenizer fits the run)."""
    for src in run.sources:
        for part in src.parts:
            rows = read_part(run, part, ["token_ids"])
            if rows:
                return max((int(np.max(r["token_ids"])) for r in rows if r.get("token_ids") is not None and len(r["token_ids"])), default=-1)
    return -1


def load_episode(view: RunView, key: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> dict[str, Any] | None:
    """One episode read on demand (``--serve``): its part is read, the row sliced."""
    try:
        _, si, pi, ri = (int(x) for x in key.split(":"))
        part = view.run.sources[si].parts[pi]
    except (ValueError, IndexError):
        return None
    rows = view.part_cache.get((si, pi))
    if rows is None:
        rows = read_part(view.run, part)
        view.part_cache[(si, pi)] = rows
        while len(view.part_cache) > PART_CACHE:
            view.part_cache.pop(next(iter(view.part_cache)))
    if ri >= len(rows):
        return None
    info = view.train.get(si)
    detail, used = episode_detail(rows[ri], view.vocab, info, info.rows.get((pi, ri)) if info else None, max_tokens)
    detail["vocab"] = {str(k): v for k, v in view.vocab.text(used).items()}
    return detail


def _png_uri(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return "data:image/png;base64," + base64.b64encode(fh.read()).decode("ascii")
    except OSError:
        return None


def run_summary(view: RunView) -> dict[str, Any]:
    """What the summary tab shows about one run (plots as data URIs)."""
    run = view.run
    plots = []
    for p in run.plots:
        uri = _png_uri(p["path"])
        if uri:
            plots.append({"name": p["name"], "uri": uri})
    metrics = [{k: _num(v) for k, v in m.items() if isinstance(v, (int, float)) and not isinstance(v, bool)} for m in run.metrics]
    return {
        "path": str(run.root), "kind": run.kind, "notes": list(run.notes),
        "sources": [{"name": s.name, "rows": s.rows, "parts": len(s.parts), "bad_parts": sum(p.problem is not None for p in s.parts),
                     "train": si in view.train} for si, s in enumerate(run.sources)],
        "files": run.files, "isolation": run.isolation, "metrics": metrics,
        "metrics_source": next((k for k, v in run.metrics_by_dir.items() if v is run.metrics), None),
        "declared": run.declared, "recount": rk_recount(view.index), "plots": plots,
        "tokenizer": {"path": view.vocab.path, "how": view.vocab.how} if view.vocab.path else None,
        "end_ids": view.vocab.end_ids,
        "vocab": {str(k): v for k, v in view.vocab.text(view.ids_used).items()},
    }


def pair_runs(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, str]:
    """Episode of A -> episode of B on the same task, chain and attempt: the same attempt seed
    first, then the same store name (``seed-0`` ...), then any."""
    by_seed: dict[tuple, str] = {}
    by_src: dict[tuple, str] = {}
    by_att: dict[tuple, str] = {}
    for e in b:
        base = (e["iid"], e["chain"], e["att"])
        by_seed.setdefault((*base, e.get("seed")), e["key"])
        by_src.setdefault((*base, e["src"]), e["key"])
        by_att.setdefault(base, e["key"])
    pairs = {}
    for e in a:
        base = (e["iid"], e["chain"], e["att"])
        k = by_seed.get((*base, e.get("seed"))) or by_src.get((*base, e["src"])) or by_att.get(base)
        if k:
            pairs[e["key"]] = k
    return pairs


def page_data(views: list[RunView], *, mode: str = "file") -> dict[str, Any]:
    """The page's data object (``views[1]``, when given, is the ``--compare`` run)."""
    data: dict[str, Any] = {
        "mode": mode, "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "runs": [run_summary(v) for v in views],
        "index": [e for v in views for e in v.index],
        "episodes": {k: d for v in views for k, d in v.episodes.items()} if mode == "file" else None,
        "pairs": pair_runs(views[0].index, views[1].index) if len(views) > 1 else None,
    }
    return data
