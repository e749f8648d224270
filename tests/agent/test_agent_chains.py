"""FC-SWE recovery chains on a real task: failure context, reset between attempts, variants."""

from __future__ import annotations

import pytest

from swetrain.agent.chains import CONTEXT_HEADER, RecoveryChain, build_failure_context, truncate_middle
from swetrain.agent.loop import EpisodeLimits
from swetrain.agent.scripted import FINISH_CALL, KeywordScript, ScriptedPolicy, TurnScript, bash_call, replace_call
from swetrain.env.demo import build_demo_task
from swetrain.env.verdict import TestResult as VerdictTest
from swetrain.env.verdict import Verdict
from swetrain.env.verifier import Verifier
from swetrain.env.workspace import Workspace

BUG = "return a + b  # bug: should multiply"
WRONG = replace_call("calc/__init__.py", BUG, "return a - b")
RIGHT = replace_call("calc/__init__.py", BUG, "return a * b")
LIMITS = EpisodeLimits(max_turns=6)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return build_demo_task(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def verifier():
    return Verifier(timeout_s=120)


def run_chain(task, verifier, tok, script, variant="patch+verifier", attempts=2):
    policy = ScriptedPolicy(tok, script)
    with Workspace.create(task) as ws:
        return RecoveryChain(attempts, variant, 1024, LIMITS).run(task, ws, policy, verifier, chain=3, seed=5)


@pytest.mark.slow
def test_attempt_two_sees_the_failure_context_and_recovers(task, verifier, tiny_tokenizer):
    script = KeywordScript({CONTEXT_HEADER: TurnScript([RIGHT])}, default=TurnScript([WRONG]))
    first, second = run_chain(task, verifier, tiny_tokenizer, script)
    assert (first.attempt, second.attempt) == (1, 2) and first.chain == second.chain == 3
    assert not first.resolved and first.verdict.status != "FULL" and "return a - b" in first.patch
    assert second.resolved and "return a * b" in second.patch and "return a - b" not in second.patch
    assert first.context is None
    ctx = second.context
    assert ctx.startswith(CONTEXT_HEADER) and "+    return a - b" in ctx  # the failed patch
    assert "Verifier output" in ctx and "test_mul" in ctx  # the verifier's diagnostics
    prompt = tiny_tokenizer.decode(second.token_ids[: second.prompt_len], skip_special_tokens=False)
    assert ctx in prompt and task.problem_statement in prompt
    assert sum(second.assistant_mask[: second.prompt_len]) == 0  # copied context is never trainable
    assert second.context_variant == first.context_variant == "patch+verifier"
    assert first.seed != second.seed


@pytest.mark.slow
def test_reset_between_attempts_leaves_nothing_behind(task, verifier, tiny_tokenizer):
    mess = bash_call(
        "echo junk > untracked.txt && mkdir -p build/x && echo 1 > build/x/y && echo '# edit' >> calc/__init__.py "
        "&& git add -A && git -c user.email=a@b -c user.name=a commit -qm wip && git branch keep && "
        "(setsid sleep 300 > /dev/null 2>&1 &) && echo done"
    )
    probe = bash_call("git status --porcelain; git log --oneline | wc -l; git branch --list keep; ls; pgrep -c sleep || true")
    script = KeywordScript({CONTEXT_HEADER: TurnScript([probe])}, default=TurnScript([mess]))
    first, second = run_chain(task, verifier, tiny_tokenizer, script)
    assert "untracked.txt" in first.patch and not first.resolved
    assert second.patch == ""  # the recovery attempt started from the exact initial state
    observation = next(m["content"] for m in second.messages if m["role"] == "tool")
    assert "untracked.txt" not in observation and "build" not in observation and "keep" not in observation
    assert observation.splitlines()[0].strip() == "1" or "\n1\n" in observation  # one commit, clean status


@pytest.mark.parametrize("variant", ["none", "patch-only"])
def test_context_variants(task, verifier, tiny_tokenizer, variant):
    # an empty patch fails at once (no test run), which keeps this test fast
    first, second = run_chain(task, verifier, tiny_tokenizer, TurnScript([]), variant=variant)
    assert not first.resolved and not second.resolved and first.verdict.error
    if variant == "none":  # fresh retry: the same prompt again
        assert second.context is None
        assert second.token_ids[: second.prompt_len] == first.token_ids[: first.prompt_len]
    else:
        assert "changed no files" in second.context and "Verifier output" not in second.context


def test_failure_context_is_truncated_to_budget(task, tiny_tokenizer):
    patch = "diff --git a/f b/f\n" + "".join(f"+line {i} of the patch\n" for i in range(400))
    verdict = Verdict(
        instance_id=task.instance_id, status="NO", patch_applied=True,
        tests=[VerdictTest(test_id="tests/t.py::test_x", kind="FAIL_TO_PASS", status="FAILED", traceback="E" * 10)],
        diagnostics="FAILED tests/t.py::test_x\n" + "".join(f"frame {i}\n" for i in range(500)) + "AssertionError: boom",
    )
    ctx = build_failure_context(task, patch, verdict, 300, "patch+verifier", tokenizer=tiny_tokenizer)
    n = len(tiny_tokenizer.encode(ctx, add_special_tokens=False))
    assert n <= 300 + 80, n  # budget plus the fixed framing lines
    assert "+line 0 of the patch" in ctx and "+line 399 of the patch" in ctx  # head and tail kept
    assert "patch truncated" in ctx and "cut from the middle" in ctx
    assert "AssertionError: boom" in ctx and "verifier output truncated" in ctx
    assert build_failure_context(task, patch, verdict, 300, "none") is None
    assert "Verifier output" not in build_failure_context(task, patch, verdict, 300, "patch-only")
    with pytest.raises(ValueError, match="context variant"):
        build_failure_context(task, patch, verdict, 300, "patch+tests")
    assert truncate_middle("short", 10, tiny_tokenizer) == "short"
