"""TokenBuffer: the four token columns of an attempt grow together."""

from __future__ import annotations

import pytest

from swetrain.agent.tokens import TokenBuffer


def test_context_and_generated_ids_get_their_mask_segment_and_logprobs():
    buf = TokenBuffer()
    buf.append([5, 6, 7])  # prompt
    prompt = buf.ids
    buf.append([8, 9], turn=1, logprobs=[-0.5, -1])
    buf.append([10])  # observation
    buf.append([11], turn=2, logprobs=[-2.0])
    assert buf.ids == [5, 6, 7, 8, 9, 10, 11] and len(buf) == 7
    assert buf.mask == [0, 0, 0, 1, 1, 0, 1]
    assert buf.segments == [0, 0, 0, 1, 1, 0, 2]
    assert buf.logprobs == [0.0, 0.0, 0.0, -0.5, -1.0, 0.0, -2.0]
    assert all(isinstance(x, float) for x in buf.logprobs)
    assert prompt is buf.ids  # grown in place: a prompt handed to the policy is the buffer's list


def test_mismatched_logprobs_are_refused_and_leave_the_buffer_unchanged():
    buf = TokenBuffer()
    buf.append([1, 2])
    with pytest.raises(ValueError, match="1 log-probs for 2 generated ids"):
        buf.append([3, 4], turn=1, logprobs=[-0.1])
    with pytest.raises(ValueError, match="no log-probs"):
        buf.append([3], turn=1)
    with pytest.raises(ValueError, match="context ids"):
        buf.append([3], logprobs=[-0.1])
    with pytest.raises(ValueError, match="turn"):
        buf.append([3], turn=-1)
    assert (buf.ids, buf.mask, buf.segments, buf.logprobs) == ([1, 2], [0, 0], [0, 0], [0.0, 0.0])
