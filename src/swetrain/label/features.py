"""Feature vectors for the learned offline labeler: embeddings + decision-record signals + metadata.

Per instance (all derived from the :class:`Evidence`, nothing keyed on ids or repository names):

* ``emb_statement`` (384): MiniLM embedding of repository words + statement (the offline backend's
  96-token instance embedding);
* ``emb_change`` (384): MiniLM embedding of the changed paths + patch excerpt (96 tokens);
* ``emb_title`` (384): MiniLM embedding of the issue's first line (64 tokens);
* ``emb_issue`` (384): MiniLM embedding of repository words (+ metadata) + statement (1500
  characters, 256 tokens);
* ``score_task_type.*`` (26) / ``score_domain.*`` (21): the offline backend's per-L1 scores
  (decision-record signal hits per evidence field + centred prototype similarity of ``emb_statement``);
* ``struct.*``: changed code/test files, lines, hunks, package dirs (log1p) and path-kind flags
  (only tests / docs / CI / packaging files, deployment files, no patch), statement length;
* ``heur.*``: one-hot of the rule-based scale levels, spec type, dependency context;
* ``lang.*``: one-hot of the code language (changed-file extensions, else repository language);
* ``card.has`` and three per-Domain-L1 channels from the repository card (:mod:`swetrain.label.cards`;
  zero where the row has no card): ``card_zs_rule.*`` (21), the largest cosine similarity between the
  MiniLM embedding of what the card says the repository is (``RepoCard.about``, 256 tokens) and the
  family's decision records (family description; each child's rule and source concept; each kind of
  repository its ``repositories`` record names, one phrase each);
  ``card_zs_head.*`` (21), the same for "name: first 300 characters" (128 tokens) against the
  backend's label prototypes; ``card_sig.*`` (21), the decision-record signal scores with the card as
  repository metadata (the heuristic backend's Domain scoring, no embedding); ``card_zs_sent.*`` (21,
  ``feat-v5``), the largest cosine similarity between any one sentence of ``RepoCard.about``
  (:func:`card_sentences`, 64 tokens each) and the family's records and repository kinds (the rule
  channel's records): a README whose one sentence names its kind is not averaged away by the rest.

Each axis of the model uses a subset of the embedding blocks (``learn.AXIS_EXCLUDE``); the card
channels feed the Domain L1 card model (``learn.CardDomainModel``).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from swetrain.label.adapters import Evidence
from swetrain.label.io import atomic_write_bytes
from swetrain.label.learn import CARD_CHANNELS
from swetrain.label.offline import CI_PATH, DEPLOY_PATH, DOC_PATH, PKG_PATH, OfflineBackend, module_key
from swetrain.label.taxonomy import SCALE_DIMENSIONS, Taxonomy

FEATURE_VERSION = "feat-v5"
EMBEDDING_BLOCKS: tuple[str, ...] = ("emb_statement", "emb_change", "emb_title", "emb_issue")
TITLE_TOKENS = 64
ISSUE_TOKENS = 256
ISSUE_CHARS = 1500
CARD_TOKENS = 256
CARD_HEAD_CHARS = 300
SENTENCE_TOKENS = 64
SENTENCE_MIN_CHARS = 20
SENTENCE_MAX = 12
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def card_sentences(text: str) -> list[str]:
    """The sentences of a card's text (split after ``.``/``!``/``?`` and at line breaks), those of more
    than 20 characters, the first 12: each is compared with the decision records on its own."""
    parts = (p.strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if len(p) > SENTENCE_MIN_CHARS][:SENTENCE_MAX]


def repository_kinds(text: str) -> list[str]:
    """A family's ``repositories`` sentence as one phrase per kind (split at top-level commas)."""
    kinds, depth, cur = [], 0, ""
    for ch in text.rstrip("."):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            kinds.append(cur)
            cur = ""
        else:
            cur += ch
    kinds.append(cur)
    return [k.strip() for k in kinds if k.strip()]


def change_text(ev: Evidence, limit: int = 600) -> str:
    files = " ".join(ev.stats.files + ev.stats.test_files)
    return f"{ev.repo_words}. files: {files}\n{ev.patch_excerpt[:limit]}"


def title_text(ev: Evidence, limit: int = 200) -> str:
    """The issue's first line (its title in most trackers)."""
    return ev.statement.strip().split("\n")[0][:limit]


def issue_text(ev: Evidence) -> str:
    """Repository words (+ description/topics when given) and the first 1500 characters of the statement."""
    meta = " ".join([ev.description, " ".join(ev.topics)]).strip()
    head = f"{ev.repo_words}. {meta}. " if meta else f"{ev.repo_words}. "
    return head + ev.statement[:ISSUE_CHARS]


class Featurizer:
    """Turns evidence into fixed-length float32 vectors (``names`` gives every column's name)."""

    def __init__(self, taxonomy: Taxonomy, embedder=None, cache_dir: str | Path | None = None):
        self.taxonomy = taxonomy
        self.offline = OfflineBackend(taxonomy, use_embeddings=True, embedder=embedder)
        self.offline.use_card = False  # score_domain.* stay card-free; the card enters through the card.* channels
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._memo: dict[str, tuple[np.ndarray, dict]] = {}
        tx = taxonomy
        self.names: list[str] = [f"{block}.{i}" for block in EMBEDDING_BLOCKS for i in range(384)]
        self.names += [f"score_task_type.{n}" for n in tx.families("task_type")] + [f"score_domain.{n}" for n in tx.families("domain")]
        self.struct_names = ["files", "test_files", "added", "removed", "hunks", "modules", "statement_chars",
                             "only_tests", "only_docs", "only_ci", "only_packaging", "deploy", "no_patch"]
        self.names += [f"struct.{n}" for n in self.struct_names]
        self.heur = [(d, lv) for d in SCALE_DIMENSIONS for lv in tx.levels(d)]
        self.heur += [("task_spec_type", v) for v in tx.aux.task_spec_types] + [("dependency_context", v) for v in tx.aux.dependency_contexts]
        self.names += [f"heur.{d}.{v}" for d, v in self.heur]
        self.langs = list(tx.aux.code_languages)
        self.names += [f"lang.{v}" for v in self.langs]
        self.domain_families = list(tx.families("domain"))
        self.names += ["card.has"] + [f"{ch}.{f}" for ch in CARD_CHANNELS for f in self.domain_families]
        self._rule_protos: dict[str, np.ndarray] | None = None
        self._kind_protos: dict[str, np.ndarray] | None = None

    @property
    def dim(self) -> int:
        return len(self.names)

    def _embeddings(self, evs: Sequence[Evidence]) -> dict[str, np.ndarray]:
        """One (n, 384) array per name in ``EMBEDDING_BLOCKS``."""
        texts = {"emb_statement": [self.offline.instance_text(e) for e in evs], "emb_change": [change_text(e) for e in evs],
                 "emb_title": [title_text(e) for e in evs], "emb_issue": [issue_text(e) for e in evs]}
        limits = {"emb_title": TITLE_TOKENS, "emb_issue": ISSUE_TOKENS}
        key = hashlib.sha256("\x00".join([FEATURE_VERSION, *[t for b in EMBEDDING_BLOCKS for t in texts[b]]]).encode("utf-8")).hexdigest()[:24]
        path = self.cache_dir / f"emb-{key}.npz" if self.cache_dir is not None else None
        if path is not None and path.exists():
            with np.load(path) as z:
                return {b: z[b] for b in EMBEDDING_BLOCKS}
        emb = self.offline.embedder
        out = {b: emb.encode(texts[b], max_length=limits.get(b)) for b in EMBEDDING_BLOCKS}
        if path is not None:
            buf = io.BytesIO()
            np.savez_compressed(buf, **out)
            atomic_write_bytes(path, buf.getvalue())
        return out

    def _encode_cached(self, texts: list[str], max_length: int, tag: str) -> np.ndarray:
        """MiniLM embeddings of ``texts`` (disk-cached by the text set when a cache folder is set)."""
        key = hashlib.sha256("\x00".join([FEATURE_VERSION, tag, str(max_length), *texts]).encode("utf-8")).hexdigest()[:24]
        path = self.cache_dir / f"card-{key}.npy" if self.cache_dir is not None else None
        if path is not None and path.exists():
            return np.load(path)
        out = self.offline.embedder.encode(texts, max_length=max_length)
        if path is not None:
            buf = io.BytesIO()
            np.save(buf, out)
            atomic_write_bytes(path, buf.getvalue())
        return out

    def rule_prototypes(self) -> dict[str, np.ndarray]:
        """Per Domain L1: embeddings of its description and of each child's rule + source concept."""
        if self._rule_protos is None:
            keys, texts = [], []
            for name, fam in self.taxonomy.families("domain").items():
                keys.append(name)
                texts.append(f"{name.replace('_', ' ')}: {fam.description}")
                for c in fam.children:
                    keys.append(f"{name}.{c.name}")
                    texts.append(f"{c.name.replace('_', ' ')} ({name.replace('_', ' ')}): {c.rule} {c.source_concept}")
            vecs = self._encode_cached(texts, 128, "rule-protos")
            self._rule_protos = dict(zip(keys, vecs))
        return self._rule_protos

    def kind_prototypes(self) -> dict[str, np.ndarray]:
        """Per Domain L1 with a ``repositories`` record: (kinds, 384) embeddings of each repository kind."""
        if self._kind_protos is None:
            fams = {n: repository_kinds(f.repositories) for n, f in self.taxonomy.families("domain").items() if f.repositories}
            texts = [k for kinds in fams.values() for k in kinds]
            vecs = self._encode_cached(texts, 64, "kind-protos") if texts else np.zeros((0, 384), dtype=np.float32)
            self._kind_protos, start = {}, 0
            for name, kinds in fams.items():
                self._kind_protos[name] = vecs[start : start + len(kinds)]
                start += len(kinds)
        return self._kind_protos

    def _card_channels(self, evs: Sequence[Evidence]) -> np.ndarray:
        """(n, 1 + 4 * 21): ``card.has`` and the card channels, in ``CARD_CHANNELS`` order (see the
        module docstring)."""
        fams = self.domain_families
        n_f = len(fams)
        col = {ch: 1 + i * n_f for i, ch in enumerate(CARD_CHANNELS)}
        out = np.zeros((len(evs), 1 + len(CARD_CHANNELS) * n_f), dtype=np.float32)
        with_card = [i for i, e in enumerate(evs) if e.card is not None and e.card.about().strip()]
        for i, ev in enumerate(evs):  # signal scores: with the card as metadata (statement, name, change as always)
            card_ev = replace(ev, description=ev.card_text, topics=()) if ev.card is not None else ev
            sig = {x.name: x.score for x in self.offline._score_families(card_ev, "domain", None)}
            out[i, col["card_sig"] : col["card_sig"] + n_f] = [sig[f] for f in fams]
        if not with_card:
            return out
        full = sorted({evs[i].card.about() for i in with_card})
        head = sorted({self.card_head(evs[i]) for i in with_card})
        e_full = dict(zip(full, self._encode_cached(full, CARD_TOKENS, "card-about")))
        e_head = dict(zip(head, self._encode_cached(head, 128, "card-head")))
        rules, kinds = self.rule_prototypes(), self.kind_prototypes()
        protos = self.offline._prototypes()
        no_kinds = np.zeros((0, 384), dtype=np.float32)
        mats = {  # per family: the records it is compared with (rule channel: records and repository kinds)
            "card_zs_rule": [np.concatenate([np.stack([v for k, v in rules.items() if k == f or k.startswith(f + ".")]),
                                             kinds.get(f, no_kinds)]) for f in fams],
            "card_zs_head": [np.stack([v for k, v in protos.items() if k == f"domain:{f}" or k.startswith(f"domain:{f}.")]) for f in fams],
        }
        sents = {i: card_sentences(evs[i].card.about()) for i in with_card}
        uniq = sorted({t for ts in sents.values() for t in ts})
        e_sent = dict(zip(uniq, self._encode_cached(uniq, SENTENCE_TOKENS, "card-sent"))) if uniq else {}
        for i in with_card:
            vec = {"card_zs_rule": e_full[evs[i].card.about()], "card_zs_head": e_head[self.card_head(evs[i])]}
            out[i, 0] = 1.0
            for ch, per_family in mats.items():
                out[i, col[ch] : col[ch] + n_f] = [float((m @ vec[ch]).max()) for m in per_family]
            if sents[i]:  # no sentence of more than 20 characters: 0 for every family (no evidence either way)
                s_mat = np.stack([e_sent[t] for t in sents[i]])
                out[i, col["card_zs_sent"] : col["card_zs_sent"] + n_f] = [float((m @ s_mat.T).max()) for m in mats["card_zs_rule"]]
        return out

    @staticmethod
    def card_head(ev: Evidence) -> str:
        name = ev.repo.split("/")[-1] if ev.repo else ""
        return f"{name}: {ev.card.about()[:CARD_HEAD_CHARS]}" if ev.card is not None else name

    def _struct(self, ev: Evidence) -> list[float]:
        st = ev.stats
        code = st.files
        flags = [
            float(not code and bool(st.test_files)),
            float(bool(code) and all(DOC_PATH.search(p) for p in code)),
            float(bool(code) and all(CI_PATH.search(p) for p in code)),
            float(bool(code) and all(PKG_PATH.search(p) for p in code)),
            float(any(DEPLOY_PATH.search(p) for p in code)),
            float(st.empty),
        ]
        counts = [len(code), len(st.test_files), st.added, st.removed, st.hunks, len({module_key(p) for p in code}), len(ev.statement)]
        return [math.log1p(c) for c in counts] + flags

    def heuristics(self, ev: Evidence, task_l1: str) -> dict[str, str]:
        """The rule-based scale levels, spec type, dependency context and code language of one instance."""
        scope, complexity, time, _ = self.offline.scale(ev, task_l1)
        return {"scope": scope, "complexity": complexity, "time": time, "task_spec_type": self.offline.task_spec_type(ev),
                "dependency_context": self.offline.dependency_context(ev), "code_language": self.offline.code_language(ev)[0]}

    def transform(self, evs: Sequence[Evidence]) -> tuple[np.ndarray, list[dict]]:
        """(features (n, dim) float32, the rule-based heuristic values and signal hits per instance).

        Results are memoised per evidence digest, so cross-validation featurises each row once.
        """
        evs = list(evs)
        if not evs:
            return np.zeros((0, self.dim), dtype=np.float32), []
        keys = [e.digest() for e in evs]
        todo = [i for i, k in enumerate(keys) if k not in self._memo]
        if todo:
            x, heur = self._transform([evs[i] for i in todo])
            for j, i in enumerate(todo):
                self._memo[keys[i]] = (x[j], heur[j])
        return np.stack([self._memo[k][0] for k in keys]), [self._memo[k][1] for k in keys]

    def _transform(self, evs: Sequence[Evidence]) -> tuple[np.ndarray, list[dict]]:
        emb = self._embeddings(evs)
        s = emb["emb_statement"]
        rows = []
        heur_all = []
        for i, ev in enumerate(evs):
            tt = self.offline._score_families(ev, "task_type", s[i])
            dm = self.offline._score_families(ev, "domain", s[i])
            tt_s = {x.name: x.score for x in tt}
            dm_s = {x.name: x.score for x in dm}
            heur: dict = self.heuristics(ev, tt[0].name)
            heur["hits"] = {"task_type": {x.name: x.hits for x in tt if x.hits}, "domain": {x.name: x.hits for x in dm if x.hits}}
            heur_all.append(heur)
            vec = [tt_s[n] for n in self.taxonomy.families("task_type")] + [dm_s[n] for n in self.taxonomy.families("domain")]
            vec += self._struct(ev)
            vec += [float(heur[d] == v) for d, v in self.heur]
            vec += [float(heur["code_language"] == v) for v in self.langs]
            rows.append(vec)
        rest = np.asarray(rows, dtype=np.float32)
        card = self._card_channels(evs)
        return np.concatenate([emb[b] for b in EMBEDDING_BLOCKS] + [rest, card], axis=1).astype(np.float32), heur_all
