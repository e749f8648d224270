"""The tiny default policy: a byte-level BPE tokenizer trained offline and a random Qwen2-style LM.

``build_tiny(out_dir)`` writes a standard transformers checkpoint (``config.json``,
``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json``, ``chat_template.jinja``,
``generation_config.json``) that every backend loads with ``AutoModelForCausalLM`` /
``AutoTokenizer.from_pretrained(out_dir)``. Nothing is downloaded: the tokenizer corpus is the
Python standard library on disk plus synthetic conversations in our chat/tool-call format.

The weights are randomly initialised (seeded): the model exists to exercise the machinery (token
bookkeeping, log-probs, weight sync, RL updates) quickly on CPU, not to solve tasks.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from swetrain.policy.chat_format import (
    CHAT_TEMPLATE,
    END_OF_TEXT,
    IM_END,
    MARKUP_TOKENS,
    SPECIAL_TOKENS,
)

log = logging.getLogger(__name__)

#: Bump when the recipe changes so cached builds are not reused across recipes.
RECIPE_VERSION = 1
INFO_FILE = "swetrain_policy.json"


@dataclass(frozen=True)
class TinyPreset:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    max_position_embeddings: int = 8192
    corpus_bytes: int = 3_000_000


PRESETS: dict[str, TinyPreset] = {
    "tiny": TinyPreset(6144, 192, 512, 4, 6, 2),
    "small": TinyPreset(8192, 256, 768, 6, 8, 2, corpus_bytes=5_000_000),
}

_SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idle_test", "lib2to3"}


def stdlib_python_files(limit_bytes: int) -> Iterator[str]:
    """Texts of the standard library's ``.py`` files, in sorted order, until ``limit_bytes``."""
    root = Path(sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        raise FileNotFoundError(f"standard library folder {root} (sysconfig 'stdlib') does not exist")
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            try:
                text = (Path(dirpath) / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            yield text
            total += len(text.encode("utf-8"))
            if total >= limit_bytes:
                return


_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command to run."}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "str_replace",
            "description": "Replace one exact occurrence of old_str with new_str in a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_str": {"type": "string"},
                    "new_str": {"type": "string"},
                },
                "required": ["path", "old_str", "new_str"],
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "submit", "description": "Finish and submit the patch.", "parameters": {"type": "object", "properties": {}}},
    },
]

_ISSUES = [
    "`parse_date` raises ValueError on ISO strings with a trailing Z.",
    "The cache is never invalidated when the config file changes.",
    "Calling `merge()` with an empty list returns None instead of an empty dict.",
    "Unicode file names break the archive writer on Windows paths.",
    "`Client.retry` sleeps even when max_retries is 0.",
]
_COMMANDS = [
    "ls -la",
    "grep -rn 'def parse_date' src/",
    "python -m pytest -q tests/test_utils.py",
    "git diff",
    "sed -n 1,40p src/pkg/core.py",
    "cat setup.cfg",
]
_OUTPUTS = [
    "1 failed, 12 passed in 0.31s",
    "src/pkg/dates.py:14:def parse_date(text):",
    "diff --git a/src/pkg/core.py b/src/pkg/core.py\n@@ -3,7 +3,7 @@\n-    return None\n+    return {}",
    "Traceback (most recent call last):\n  File \"src/pkg/core.py\", line 9, in merge\nTypeError: 'NoneType' object is not iterable",
    "README.md  setup.cfg  src  tests",
]


def chat_corpus(n: int, seed: int) -> list[dict]:
    """``n`` synthetic multi-turn conversations with tool calls (rendered by the chat template later)."""
    rng = random.Random(seed)
    conversations = []
    for _ in range(n):
        messages: list[dict] = [
            {"role": "system", "content": "You are a careful software engineering assistant."},
            {"role": "user", "content": f"Fix this issue in the repository.\n\n{rng.choice(_ISSUES)}"},
        ]
        for _turn in range(rng.randint(1, 4)):
            call = {"name": "bash", "arguments": {"command": rng.choice(_COMMANDS)}}
            if rng.random() < 0.3:
                call = {
                    "name": "str_replace",
                    "arguments": {"path": "src/pkg/core.py", "old_str": "return None", "new_str": "return {}"},
                }
            thought = rng.choice(["", "<think>\nLet me look at the code first.\n</think>\n", "I will run the tests."])
            messages.append({"role": "assistant", "content": thought, "tool_calls": [{"type": "function", "function": call}]})
            messages.append({"role": "tool", "content": rng.choice(_OUTPUTS)})
        messages.append({"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "submit", "arguments": {}}}]})
        conversations.append(messages)
    return conversations


def _render(messages: list[dict], tools: list[dict] | None) -> str:
    """Render a conversation with the chat template (jinja2 directly: no tokenizer exists yet)."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    template = _compile_jinja_template(CHAT_TEMPLATE)
    return template.render(messages=messages, tools=tools, add_generation_prompt=False)


def _qwen2_backend():
    """The ``tokenizers.Tokenizer`` of an empty transformers ``Qwen2Tokenizer`` (for its stages)."""
    try:
        from transformers.models.qwen2.tokenization_qwen2 import Qwen2Tokenizer

        return Qwen2Tokenizer().backend_tokenizer
    except Exception as exc:  # transformers < 5 needs vocab files to build one
        raise RuntimeError(
            f"building the tiny tokenizer needs transformers >= 5 (Qwen2Tokenizer() failed: {exc})"
        ) from exc


def train_tokenizer(vocab_size: int, corpus_bytes: int, seed: int):
    """Train a byte-level BPE ``tokenizers.Tokenizer`` with our special and markup tokens."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = list(stdlib_python_files(corpus_bytes))
    texts += [_render(m, _TOOLS if i % 2 == 0 else None) for i, m in enumerate(chat_corpus(400, seed))]

    tokenizer = Tokenizer(models.BPE())
    # Qwen2's normaliser and pre-tokeniser (taken from transformers' own Qwen2Tokenizer, not
    # re-typed): transformers 5 loads a qwen2 checkpoint's tokenizer through Qwen2Tokenizer, which
    # rebuilds these two stages, so ours must equal them for every loader to produce the same ids.
    reference = _qwen2_backend()
    tokenizer.normalizer = reference.normalizer
    tokenizer.pre_tokenizer = reference.pre_tokenizer
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS + MARKUP_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return tokenizer, sum(len(t.encode("utf-8")) for t in texts)


def build_tiny(out_dir: str | os.PathLike, *, preset: str = "tiny", seed: int = 0) -> Path:
    """Build the tiny default policy into ``out_dir`` (created; must be empty or absent).

    Returns the folder, loadable with ``AutoModelForCausalLM/AutoTokenizer.from_pretrained``.
    """
    import torch
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    from swetrain.policy.threads import configure_torch_threads

    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r}: unknown tiny preset; choose one of {sorted(PRESETS)}")
    spec = PRESETS[preset]
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"out_dir {out} exists and is not empty; pick a new folder")
    configure_torch_threads()
    started = time.perf_counter()

    raw, corpus_size = train_tokenizer(spec.vocab_size, spec.corpus_bytes, seed)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token=IM_END,
        pad_token=END_OF_TEXT,
        model_max_length=spec.max_position_embeddings,
        padding_side="left",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    vocab = len(tokenizer)
    padded_vocab = (vocab + 63) // 64 * 64  # round up for efficient matmuls; extra rows unused

    eos_id = tokenizer.convert_tokens_to_ids(IM_END)
    eot_id = tokenizer.convert_tokens_to_ids(END_OF_TEXT)
    config = Qwen2Config(
        vocab_size=padded_vocab,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=eot_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(eos_token_id=[eos_id, eot_id], pad_token_id=eot_id)

    tmp = out.with_name(f".{out.name}.building-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    n_params = sum(p.numel() for p in model.parameters())
    info = {
        "kind": "swetrain-tiny",
        "recipe_version": RECIPE_VERSION,
        "preset": preset,
        "seed": seed,
        "parameters": n_params,
        "vocab_size": vocab,
        "corpus_bytes": corpus_size,
        "build_seconds": round(time.perf_counter() - started, 2),
        "spec": asdict(spec),
    }
    (tmp / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    if out.exists():
        out.rmdir()
    out.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, out)
    log.info("built tiny policy %s: %d parameters, vocab %d, %.1fs", out, n_params, vocab, info["build_seconds"])
    return out


def default_tiny_path(preset: str = "tiny", seed: int = 0) -> Path:
    """Where ``ensure_tiny`` keeps the shared build (under ``swetrain.paths.cache_dir('policies')``)."""
    from swetrain.paths import cache_dir

    return cache_dir("policies") / f"{preset}-r{RECIPE_VERSION}-s{seed}"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with its parents) for the ``with`` block:
    one process at a time builds a shared cache entry."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_built(path: Path) -> bool:
    return (path / INFO_FILE).is_file() and (path / "model.safetensors").is_file()


def ensure_tiny(preset: str = "tiny", seed: int = 0) -> Path:
    """The shared tiny policy, built once (under a file lock, safe across processes) and reused."""
    path = default_tiny_path(preset, seed)
    if is_built(path):
        return path
    with file_lock(path.with_name(path.name + ".lock")):
        if not is_built(path):
            shutil.rmtree(path, ignore_errors=True)
            build_tiny(path, preset=preset, seed=seed)
    return path
