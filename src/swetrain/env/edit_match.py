"""Tolerant matching for ``file_editor str_replace`` (``edit_match: tolerant``): pure functions.

An exact, unique ``old_str`` is never handled here (the tool replaces it as it always did). When
``old_str`` is not found verbatim, :func:`locate` tries these tiers in order and stops at the first
that finds anything:

1. ``trailing-whitespace``: lines compared with trailing whitespace ignored;
2. ``indentation``: lines compared without their indentation, which must differ by one uniform
   offset (``old_str`` copied at the wrong depth);
3. ``normalized``: additionally, ``'`` and ``"`` are the same, typographic punctuation
   (curly quotes, dashes, ellipsis, non-breaking space) counts as its ASCII form and runs of spaces
   as one space; indentation may differ line by line;
4. ``similar``: the one window of ``len(old_str lines)`` lines whose normalized text is most
   similar to ``old_str``'s (``difflib`` ratio at least :data:`SIMILARITY_THRESHOLD`, and no other
   window within :data:`AMBIGUITY_MARGIN` of it).

A tier that finds more than one place refuses (:class:`EditRefused`, "ambiguous") instead of
falling through; a best window below the threshold is refused as weak. A one-line ``old_str`` may
be part of a line in tiers 1 and 3 (as with an exact match); otherwise tiers match whole lines.

What is written over a matched window is not ``new_str`` itself but the *difference* between
``old_str`` and ``new_str`` carried over onto the file's lines (:func:`transfer`): lines that
``new_str`` keeps from ``old_str`` keep the file's text; a line changed in place gets the same
character edits at the aligned positions of the file's line (a model that wrote ``if`` for the
file's ``elif`` in both strings still changes only the operator); inserted lines are re-indented
to the file's depth. When an edit cannot be placed on the file's line unambiguously the edit is
refused. Nothing outside the matched lines ever changes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

MODES = ("exact", "tolerant")
TIERS = ("exact", "trailing-whitespace", "indentation", "normalized", "similar")
SIMILARITY_THRESHOLD = 0.8
AMBIGUITY_MARGIN = 0.05
CLOSEST_LINES = 8  # most lines shown for a miss
MIN_SIMILAR_CHARS = 16  # shorter old_str (normalized) skips it too: a ratio of a few characters says little
_REWRITE_RATIO = 0.5  # a changed line this dissimilar to its old line is replaced whole

_PUNCT = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
    "\u2026": "...",
}
_WS = " \t\r\f\v"


class EditRefused(ValueError):
    """No safe tolerant match. The message is the reason; ``closest`` the nearest real lines."""

    def __init__(self, message: str, closest: str = ""):
        super().__init__(message)
        self.closest = closest


class TransferError(ValueError):
    """The old_str -> new_str difference cannot be placed on the matched text unambiguously."""


@dataclass(frozen=True)
class EditMatch:
    """Where a tolerant match landed and what replaces it: ``text[start:end]`` (whole lines
    ``first_line..last_line``, 1-based) becomes ``replacement``."""

    tier: str
    start: int
    end: int
    replacement: str
    first_line: int
    last_line: int
    detail: str  # e.g. "matched after re-indenting by 4 spaces"
    score: float = 1.0

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"edit_match must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


# ------------------------------------------------------------------------------- normalizing
def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_WS))]


def normalize_map(line: str) -> tuple[str, list[int]]:
    """Tier-3 key of one line, and for each key character its index in ``line``: leading and
    trailing whitespace dropped, typographic punctuation as ASCII, ``'`` as ``"``, runs of
    whitespace as one space."""
    out: list[str] = []
    idx: list[int] = []
    body_start = len(line) - len(line.lstrip(_WS))
    body_end = len(line.rstrip(_WS))
    prev_space = False
    for i in range(body_start, body_end):
        ch = _PUNCT.get(line[i], line[i])
        if ch == "'":
            ch = '"'
        if ch in _WS:
            if prev_space:
                continue
            ch, prev_space = " ", True
        else:
            prev_space = False
        for c in ch:  # "\u2026" stands for three characters
            out.append(c)
            idx.append(i)
    return "".join(out), idx


def normalize(line: str) -> str:
    return normalize_map(line)[0]


def _strip_one_newline(s: str) -> str:
    return s[:-1] if s.endswith("\n") else s


def _line_starts(lines: list[str]) -> list[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


# -------------------------------------------------------------------------------- transfer
def _char_map(o: str, m: str) -> list[int | None]:
    """For each index of ``o``, the aligned index of ``m`` (None where unaligned). Matching blocks
    from difflib; a gap of equal length on both sides between two blocks is aligned position by
    position (a substituted character, e.g. a quote)."""
    mp: list[int | None] = [None] * len(o)
    prev_a = prev_b = 0
    for a, b, size in difflib.SequenceMatcher(None, o, m, autojunk=False).get_matching_blocks():
        if a - prev_a == b - prev_b:
            for t in range(a - prev_a):
                mp[prev_a + t] = prev_b + t
        for t in range(size):
            mp[a + t] = b + t
        prev_a, prev_b = a + size, b + size
    return mp


def transfer_chars(o: str, n: str, m: str) -> str:
    """Apply the character edits that turn ``o`` into ``n`` at the aligned positions of ``m``."""
    if o == m:
        return n
    mp = _char_map(o, m)
    out: list[str] = []
    cur = 0
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, o, n, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        inside = [p for p in mp[a1:a2] if p is not None]
        if inside:  # the file's counterpart of o[a1:a2]; its unaligned ends may only be whitespace
            lo = next(t for t in range(a1, a2) if mp[t] is not None)
            hi = next(t for t in range(a2 - 1, a1 - 1, -1) if mp[t] is not None)
            if o[a1:lo].strip() or o[hi + 1 : a2].strip():
                raise TransferError(f"{o[a1:a2]!r} has no full counterpart in {m!r}")
            s, e = mp[lo], mp[hi] + 1
            if e < s or e - s > 2 * (a2 - a1) + 2:
                raise TransferError(f"the counterpart of {o[a1:a2]!r} in {m!r} differs too much")
        elif a1 < a2 and b1 == b2:
            continue  # deleting text the file does not have: nothing to do
        elif a1 < a2 and o[a1:a2].strip():
            raise TransferError(f"{o[a1:a2]!r} has no counterpart in {m!r}")
        # an insertion (or a replaced run of whitespace the file lacks): after the aligned left
        # neighbour, else before the aligned right one
        elif a1 > 0 and mp[a1 - 1] is not None:
            s = e = mp[a1 - 1] + 1
        elif a2 < len(o) and mp[a2] is not None:
            s = e = mp[a2]
        elif not o:
            s = e = len(m)
        else:
            raise TransferError(f"no place in {m!r} for {n[b1:b2]!r}")
        if s < cur:
            raise TransferError(f"edits overlap on {m!r}")
        out.append(m[cur:s])
        out.append(n[b1:b2])
        cur = e
    out.append(m[cur:])
    return "".join(out)


def reindent(line: str, old_lead: str, new_lead: str) -> str:
    """``line`` moved from indentation ``old_lead`` to ``new_lead`` (blank lines stay as written)."""
    if not line.strip(_WS) or old_lead == new_lead:
        return line
    if line.startswith(old_lead):
        return new_lead + line[len(old_lead) :]
    if old_lead.startswith(new_lead):  # shallower: remove what can be removed
        cut = len(old_lead) - len(new_lead)
        lead = _lead(line)
        return line[min(cut, len(lead)) :]
    return new_lead + line.lstrip(_WS) if len(_lead(line)) <= len(old_lead) else line


def _transfer_line(o: str, n: str, m: str) -> str:
    if o == m:
        return n
    if o.strip(_WS) and difflib.SequenceMatcher(None, o.strip(_WS), m.strip(_WS), autojunk=False).ratio() < _REWRITE_RATIO:
        raise TransferError(f"the changed line {o.strip()!r} is not the file's {m.strip()!r}")
    if o.strip(_WS) and difflib.SequenceMatcher(None, o, n, autojunk=False).ratio() < _REWRITE_RATIO:
        return reindent(n, _lead(o), _lead(m))  # rewritten line: new text at the file's depth
    return transfer_chars(o, n, m)


def _anchor(o_lines: list[str], m_lines: list[str], order: list[int]) -> tuple[str, str]:
    """Indentation of old_str and of the file at the first non-blank aligned line in ``order``:
    what new lines are re-indented by."""
    for k in order:
        if 0 <= k < len(o_lines) and o_lines[k].strip(_WS) and m_lines[k].strip(_WS):
            return _lead(o_lines[k]), _lead(m_lines[k])
    return "", ""


def transfer(old_lines: list[str], new_lines: list[str], file_lines: list[str]) -> list[str]:
    """``file_lines`` (aligned one to one with ``old_lines``) with the old -> new difference applied:
    a line diff (difflib) of old vs new; kept lines keep the file's text, a block changed with as
    many lines as it had is edited line by line at character level (:func:`transfer_chars`), other
    changes replace the file's lines by new_str's, re-indented to the file's depth.
    Raises :class:`TransferError` when an edit cannot be placed."""
    if len(old_lines) != len(file_lines):
        raise TransferError("old_str and the matched lines differ in length")
    out: list[str] = []
    opcodes = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    if len(old_lines) == len(new_lines):
        # as many lines before and after: pair them in order unless the line diff touches fewer
        # old lines (repeated lines can make difflib pair a changed line with its twin instead)
        paired = sum(o != n for o, n in zip(old_lines, new_lines))
        if paired <= sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag != "equal"):
            opcodes = [("equal" if o == n else "replace", i, i + 1, i, i + 1) for i, (o, n) in enumerate(zip(old_lines, new_lines))]
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            out.extend(file_lines[i1:i2])
        elif tag == "replace" and i2 - i1 == j2 - j1:
            out.extend(_transfer_line(old_lines[i1 + t], new_lines[j1 + t], file_lines[i1 + t]) for t in range(i2 - i1))
        elif tag == "delete":
            continue
        else:  # insert, or a block rewritten with another number of lines: at the file's depth
            before, after = list(range(i1 - 1, -1, -1)), list(range(i2, len(old_lines)))
            o_lead, m_lead = _anchor(old_lines, file_lines, list(range(i1, i2)) + before + after)
            out.extend(reindent(line, o_lead, m_lead) for line in new_lines[j1:j2])
    return out


# --------------------------------------------------------------------------------- locating
def _fmt_lines(lines: list[str], first: int, limit: int = CLOSEST_LINES) -> str:
    shown = lines[:limit]
    body = "\n".join(f"{first + i:6d}\t{line}" for i, line in enumerate(shown))
    if len(lines) > limit:
        body += f"\n[... {len(lines) - limit} more lines ...]"
    return body


def span_text(a: int, b: int) -> str:
    return f"line {a}" if a == b else f"lines {a}-{b}"


def _local_ratio(o_key: str, m_key: str) -> float:
    """Similarity of a one-line ``old_str`` to the part of a line it best lines up with."""
    if not o_key or not m_key:
        return 0.0
    sm = difflib.SequenceMatcher(None, o_key, m_key, autojunk=False)
    blocks = [b for b in sm.get_matching_blocks() if b.size]
    if not blocks:
        return 0.0
    matched = sum(b.size for b in blocks)
    span = blocks[-1].b + blocks[-1].size - blocks[0].b
    return 2.0 * matched / (len(o_key) + span)


def _candidate_starts(o_keys: list[str], t_keys: list[str], min_ratio: float, limit: int = 40) -> list[int]:
    """First lines of the windows worth scoring, at most ``limit``: each line of old_str found in
    the file (normalized, a line seen at most 50 times) and each of old_str's three longest lines
    similar to a file line (difflib ratio >= ``min_ratio``) vote, by its similarity, for the window
    that aligns them. A window similar as a whole has such lines (its longest lines weigh most in
    its score), so scoring only these keeps the search linear in the file's length."""
    k, n = len(o_keys), len(t_keys)
    votes: dict[int, float] = {}
    where: dict[str, list[int]] = {}
    for i, key in enumerate(t_keys):
        if key:
            where.setdefault(key, []).append(i)
    for j, key in enumerate(o_keys):
        hits = where.get(key, []) if key else []
        if len(hits) <= 50:
            for i in hits:
                votes[i - j] = votes.get(i - j, 0.0) + 1.0
    sm = difflib.SequenceMatcher(None, autojunk=False)
    for j in sorted((j for j in range(k) if o_keys[j]), key=lambda j: -len(o_keys[j]))[:3]:
        sm.set_seq2(o_keys[j])
        for i, key in enumerate(t_keys):
            if not key or key == o_keys[j]:
                continue
            sm.set_seq1(key)
            if sm.real_quick_ratio() >= min_ratio and sm.quick_ratio() >= min_ratio:
                r = sm.ratio()
                if r >= min_ratio:
                    votes[i - j] = votes.get(i - j, 0.0) + r
    starts = sorted((s for s in votes if 0 <= s <= n - k), key=lambda s: (-votes[s], s))
    return starts[:limit]


def window_score(o_keys: list[str], w_keys: list[str]) -> float:
    """Similarity of old_str to a window of as many lines, line by line: difflib's ratio over the
    aligned line pairs together, 2 * matched characters / all characters (normalized lines)."""
    sm = difflib.SequenceMatcher(None, autojunk=False)
    matched = total = 0
    for o, w in zip(o_keys, w_keys):
        total += len(o) + len(w)
        if o == w:
            matched += len(o)
        elif o and w:
            sm.set_seqs(w, o)
            matched += sum(b.size for b in sm.get_matching_blocks())
    return 2.0 * matched / total if total else 0.0


def _scan_similar(o_lines: list[str], t_keys: list[str]) -> list[tuple[float, int]]:
    """(score, first line index) of the candidate windows of ``len(o_lines)`` lines, best first
    (:func:`window_score`; ``t_keys``: the file's normalized lines)."""
    k = len(o_lines)
    o_keys = [normalize(line) for line in o_lines]
    if len("".join(o_keys)) < MIN_SIMILAR_CHARS or k > len(t_keys):
        return []
    scored = [(window_score(o_keys, t_keys[i : i + k]), i) for i in _candidate_starts(o_keys, t_keys, 0.6)]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return scored


def closest_lines(text: str, old: str) -> str:
    """The file's lines nearest to ``old`` with their numbers (``cat -n`` style), for a miss: among
    the candidate windows (:func:`_candidate_starts`) of ``len(old lines)`` lines (at most
    ``CLOSEST_LINES``), the one most similar to old_str (:func:`window_score`; a one-line old_str
    is also compared with the part of a line it lines up with)."""
    t_lines = text.split("\n")
    o_lines = _strip_one_newline(old).split("\n")
    while len(o_lines) > 1 and not o_lines[-1].strip():
        o_lines.pop()
    o_lines = o_lines[:CLOSEST_LINES]
    k = min(len(o_lines), len(t_lines))
    o_keys = [normalize(line) for line in o_lines[:k]]
    if not any(o_keys):
        return ""
    t_keys = [normalize(line) for line in t_lines]
    best, at = 0.0, 0
    for i in _candidate_starts(o_keys, t_keys, 0.3):
        w_keys = t_keys[i : i + k]
        score = window_score(o_keys, w_keys)
        if k == 1:
            score = max(score, _local_ratio(o_keys[0], w_keys[0]))
        if score > best:
            best, at = score, i
    if best <= 0.0:
        return ""
    return f"The closest lines of the file (similarity {best:.2f}):\n{_fmt_lines(t_lines[at : at + k], at + 1)}"


def _fragment_hits(key_fn, o_line: str, t_lines: list[str]) -> list[tuple[int, int, int]]:
    """(line index, start, end) in the original lines of every occurrence of ``o_line``'s key
    inside a line's key (a one-line old_str that is part of a line). An occurrence that cuts a
    name in two (``x = 1`` inside ``max = 1``, ``if`` inside ``elif``) does not count."""
    o_key = key_fn(o_line)[0]
    if not o_key:
        return []
    hits = []
    for i, line in enumerate(t_lines):
        key, idx = key_fn(line)
        pos = key.find(o_key)
        while pos != -1:
            end = pos + len(o_key)
            cut_left = pos > 0 and _is_word(key[pos - 1]) and _is_word(key[pos])
            cut_right = end < len(key) and _is_word(key[end - 1]) and _is_word(key[end])
            if not (cut_left or cut_right):
                hits.append((i, idx[pos], idx[end - 1] + 1))
            pos = key.find(o_key, pos + 1)
    return hits


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _rstrip_map(line: str) -> tuple[str, list[int]]:
    body = line.rstrip(_WS)
    return body, list(range(len(body)))


def _window_hits(o_lines: list[str], t_lines: list[str], same) -> list[int]:
    k = len(o_lines)
    return [i for i in range(len(t_lines) - k + 1) if all(same(o_lines[j], t_lines[i + j]) for j in range(k))]


def _uniform_offset(o_lines: list[str], m_lines: list[str]) -> tuple[str, str] | None:
    """(old lead, file lead) of the first non-blank line when every non-blank line's indentation
    differs by the same added or removed prefix, else None."""
    pairs = [(_lead(o), _lead(m)) for o, m in zip(o_lines, m_lines) if o.strip(_WS)]
    shifts = set()
    for ol, ml in pairs:
        if ml.startswith(ol):
            shifts.add(("+", ml[len(ol) :]))
        elif ol.startswith(ml):
            shifts.add(("-", ol[len(ml) :]))
        else:
            return None
    return pairs[0] if len(shifts) == 1 else None


def _refuse_ambiguous(where: list[tuple[int, int]], how: str, text_lines: list[str]) -> EditRefused:
    spans = ", ".join(span_text(a + 1, b + 1) for a, b in where[:6])
    more = f" and {len(where) - 6} more" if len(where) > 6 else ""
    shown = "\n".join(_fmt_lines(text_lines[a : b + 1], a + 1, 4) for a, b in where[:2])
    return EditRefused(
        f"old_str matches {len(where)} places {how} ({spans}{more}); nothing replaced. "
        "Include more surrounding lines so that it matches exactly one place.",
        shown,
    )


def locate(text: str, old: str, new: str) -> EditMatch:
    """The tolerant match of ``old`` in ``text`` and what replaces it, or :class:`EditRefused`.
    Call it only when ``old`` is not found verbatim (an exact match is the caller's)."""
    if not old.strip():
        raise EditRefused("old_str is only whitespace; nothing replaced")
    t_lines = text.split("\n")
    starts = _line_starts(t_lines)
    o_lines = _strip_one_newline(old).split("\n")
    n_lines = _strip_one_newline(new).split("\n")

    def window_match(i: int, tier: str, detail: str, score: float = 1.0) -> EditMatch:
        k = len(o_lines)
        m_lines = t_lines[i : i + k]
        try:
            repl = transfer(o_lines, n_lines, m_lines)
        except TransferError as exc:
            raise EditRefused(
                f"old_str is closest to {span_text(i + 1, i + k)} ({detail}), but the change from old_str "
                f"to new_str cannot be carried over onto those lines unambiguously ({exc}); nothing replaced.",
                _fmt_lines(m_lines, i + 1),
            ) from None
        end = starts[i + k - 1] + len(t_lines[i + k - 1])
        return EditMatch(tier, starts[i], end, "\n".join(repl), i + 1, i + k, detail, score)

    def fragment_match(hit: tuple[int, int, int], tier: str, detail: str) -> EditMatch:
        i, s, e = hit
        line = t_lines[i]
        try:
            repl = line[:s] + transfer_chars(o_lines[0], n_lines[0] if len(n_lines) == 1 else "\n".join(n_lines), line[s:e]) + line[e:]
        except TransferError as exc:
            raise EditRefused(
                f"old_str is closest to line {i + 1} ({detail}), but the change from old_str to new_str cannot "
                f"be carried over onto it unambiguously ({exc}); nothing replaced.",
                _fmt_lines([line], i + 1),
            ) from None
        return EditMatch(tier, starts[i], starts[i] + len(line), repl, i + 1, i + 1, detail)

    k = len(o_lines)
    single = k == 1
    # 1. trailing whitespace
    if single:
        hits = _fragment_hits(_rstrip_map, o_lines[0], t_lines)
        if len(hits) == 1:
            return fragment_match(hits[0], "trailing-whitespace", "matched after ignoring trailing whitespace")
        if hits:
            raise _refuse_ambiguous([(h[0], h[0]) for h in hits], "when trailing whitespace is ignored", t_lines)
    else:
        wins = _window_hits(o_lines, t_lines, lambda o, m: o.rstrip(_WS) == m.rstrip(_WS))
        if len(wins) == 1:
            return window_match(wins[0], "trailing-whitespace", "matched after ignoring trailing whitespace")
        if wins:
            raise _refuse_ambiguous([(w, w + k - 1) for w in wins], "when trailing whitespace is ignored", t_lines)
    # 2. uniform indentation offset
    wins = []
    for i in _window_hits(o_lines, t_lines, lambda o, m: o.strip(_WS) == m.strip(_WS)):
        if _uniform_offset(o_lines, t_lines[i : i + k]) is not None:
            wins.append(i)
    if len(wins) == 1:
        o_lead, m_lead = _uniform_offset(o_lines, t_lines[wins[0] : wins[0] + k])
        delta = len(m_lead) - len(o_lead)
        unit = "tabs" if "\t" in m_lead + o_lead and " " not in m_lead + o_lead else "spaces"
        detail = f"matched after re-indenting by {delta} {unit}"
        if delta < 0:
            detail += f" (old_str was indented {-delta} {unit} deeper than the file)"
        return window_match(wins[0], "indentation", detail)
    if wins:
        raise _refuse_ambiguous([(w, w + k - 1) for w in wins], "when indentation is ignored", t_lines)
    # 3. quotes, typographic punctuation and runs of spaces normalized
    detail = "matched after normalizing quotes, punctuation and spaces"
    if single:
        hits = _fragment_hits(normalize_map, o_lines[0], t_lines)
        if len(hits) == 1:
            return fragment_match(hits[0], "normalized", detail)
        if hits:
            raise _refuse_ambiguous([(h[0], h[0]) for h in hits], "when quotes and spaces are normalized", t_lines)
    else:
        wins = _window_hits(o_lines, t_lines, lambda o, m: normalize(o) == normalize(m))
        if len(wins) == 1:
            return window_match(wins[0], "normalized", detail)
        if wins:
            raise _refuse_ambiguous([(w, w + k - 1) for w in wins], "when quotes and spaces are normalized", t_lines)
    # 4. the one most similar window
    scored = _scan_similar(o_lines, [normalize(line) for line in t_lines])
    best, i = scored[0] if scored else (0.0, 0)
    if best < SIMILARITY_THRESHOLD:
        raise EditRefused(
            "no match even ignoring whitespace, indentation and quotes, and no "
            f"{'line is' if k == 1 else f'{k} lines in a row are'} similar enough to edit safely "
            f"(similarity below {SIMILARITY_THRESHOLD:.2f}); nothing replaced.",
            closest_lines(text, old),
        )
    # a window overlapping the best one is the same place misaligned, not a rival
    rivals = [(s, j) for s, j in scored[1:] if s >= best - AMBIGUITY_MARGIN and abs(j - i) >= k]
    if rivals:
        s2, j = rivals[0]
        raise EditRefused(
            f"old_str is about as similar to {span_text(i + 1, i + k)} ({best:.2f}) as to {span_text(j + 1, j + k)} "
            f"({s2:.2f}); the edit is ambiguous; nothing replaced. Copy old_str exactly from the file.",
            _fmt_lines(t_lines[i : i + k], i + 1, 4) + "\n" + _fmt_lines(t_lines[j : j + k], j + 1, 4),
        )
    if single and normalize(o_lines[0]) != normalize(t_lines[i]):
        # a one-line old_str may be part of the line: align it with the part it is similar to
        o_key, (m_key, idx) = normalize(o_lines[0]), normalize_map(t_lines[i])
        blocks = [b for b in difflib.SequenceMatcher(None, o_key, m_key, autojunk=False).get_matching_blocks() if b.size]
        s = idx[blocks[0].b]
        e = idx[blocks[-1].b + blocks[-1].size - 1] + 1
        lead = _lead(t_lines[i])
        if s > len(lead) or e < len(t_lines[i].rstrip(_WS)):
            return fragment_match((i, s, e), "similar", f"matched the most similar line (similarity {best:.2f})")
    return window_match(i, "similar", f"matched the most similar lines (similarity {best:.2f})", best)


# ------------------------------------------------------------------------------------ paths
def close_paths(path: str, files: list[str], n: int = 3) -> list[str]:
    """Existing files nearest to a missing ``path`` (relative paths): same file name elsewhere
    first, then difflib's close matches of the whole path."""
    base = path.rsplit("/", 1)[-1]
    same_name = [f for f in files if f.rsplit("/", 1)[-1] == base and f != path]
    close = difflib.get_close_matches(path, files, n=n, cutoff=0.6)
    names = {}
    for f in files:
        names.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    by_name = [f for name in difflib.get_close_matches(base, list(names), n=n, cutoff=0.75) for f in names[name]]
    out: list[str] = []
    for f in same_name + close + by_name:
        if f not in out and f != path:
            out.append(f)
    return out[:n]


_SKIP_DIRS = re.compile(r"^(\..*|__pycache__|node_modules|.*\.egg-info)$")


def skip_dir(name: str) -> bool:
    """Folders not offered as "did you mean" candidates (hidden, caches, build metadata)."""
    return bool(_SKIP_DIRS.match(name))
