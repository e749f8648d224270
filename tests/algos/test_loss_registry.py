"""Policy-loss specs in the registry: one decorator records the function, its parameter model and
the capability flags the trainer reads; the built-in losses declare theirs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from pydantic import Field, ValidationError

from swetrain.algos import LossParams, get_loss_spec, get_policy_loss, register_policy_loss
from swetrain.algos.losses import POLICY_LOSSES, LossParamModels, builtin_loss_keys, set_loss_params


class _ScaleParams(LossParams):
    scale: float = Field(default=1.0, gt=0)


@pytest.fixture()
def scaled():
    """A throw-away loss with its own parameter model and flags (removed afterwards)."""

    @register_policy_loss("test-spec-scaled", params=_ScaleParams, needs_reference=True, scores_old_logprobs=False)
    def loss(logp, logp_old, advantages, mask, *, scale=1.0, **kw):
        return -(scale * logp).sum(), {}

    yield loss
    POLICY_LOSSES.remove("test-spec-scaled")


def _algo(**kw):
    base = dict(clip_low=0.1, clip_high=0.3, tis_cap=3.0, eps_low=0.15, eps_high=0.25, params={})
    return SimpleNamespace(**{**base, **kw})


def test_builtin_specs_declare_what_the_trainer_needs():
    clipped, minirl, mopd = (get_loss_spec(n) for n in ("clipped", "minirl", "mopd"))
    assert clipped.fn is get_policy_loss("clipped") and mopd.fn is get_policy_loss("mopd")
    assert (clipped.needs_reference, clipped.needs_teachers, clipped.scores_old_logprobs) == (False, False, True)
    assert (minirl.needs_reference, minirl.needs_teachers, minirl.scores_old_logprobs) == (False, False, True)
    assert (mopd.needs_reference, mopd.needs_teachers, mopd.scores_old_logprobs) == (True, True, False)
    # the recipes' built-in algo keys, exactly as before
    assert builtin_loss_keys() == {"clipped": ("clip_low", "clip_high"), "minirl": ("tis_cap", "eps_low", "eps_high"),
                                   "mopd": ()}
    assert clipped.params_of(_algo()) == {"clip_low": 0.1, "clip_high": 0.3}
    assert minirl.params_of(_algo()) == {"tis_cap": 3.0, "eps_low": 0.15, "eps_high": 0.25}
    assert mopd.params_of(_algo()) == {}


def test_builtin_keys_are_validated_and_refuse_algo_params():
    with pytest.raises(ValidationError, match="clip_low"):
        get_loss_spec("clipped").params_of(_algo(clip_low=1.5))  # the loss needs 0 <= clip_low < 1
    with pytest.raises(ValueError, match=r"algo.params: policy loss 'minirl' has no parameter model.*\['scale'\]"):
        get_loss_spec("minirl").params_of(_algo(params={"scale": 2}))
    with pytest.raises(ValueError, match="takes the built-in algo keys"):
        set_loss_params("clipped", _ScaleParams)


def test_new_loss_is_one_decorated_function(scaled):
    spec = get_loss_spec("test-spec-scaled")
    assert spec.fn is scaled and get_policy_loss("test-spec-scaled") is scaled
    assert (spec.needs_reference, spec.needs_teachers, spec.scores_old_logprobs) == (True, False, False)
    assert spec.takes_algo_params and spec.builtin_keys() is None
    kwargs = spec.params_of(_algo(params={"scale": 2.5}))
    assert kwargs == {"scale": 2.5}
    logp = torch.tensor([[-1.0, -2.0]])
    loss, _ = spec.fn(logp, None, torch.ones(1), torch.ones(1, 2), **kwargs)
    assert float(loss) == pytest.approx(7.5)
    assert spec.params_of(_algo()) == {"scale": 1.0}  # the model's default
    with pytest.raises(ValidationError, match="greater than 0"):
        spec.params_of(_algo(params={"scale": -1}))
    with pytest.raises(ValidationError, match="scal\n"):
        spec.params_of(_algo(params={"scal": 2}))


def test_teachers_come_with_the_reference():
    with pytest.raises(ValueError, match="needs_teachers needs needs_reference=True"):
        register_policy_loss("test-spec-teachers-only", needs_teachers=True)(lambda *a, **k: None)
    assert "test-spec-teachers-only" not in POLICY_LOSSES


def test_reregistering_needs_override(scaled):
    with pytest.raises(ValueError, match=r"'test-spec-scaled' is already registered \(to .*scaled.<locals>.loss\)"):
        register_policy_loss("test-spec-scaled")(lambda *a, **k: None)
    # the same function with the same flags again (a module reload) is fine
    register_policy_loss("test-spec-scaled", params=_ScaleParams, needs_reference=True, scores_old_logprobs=False)(scaled)

    def other(*a, **k):
        return None

    register_policy_loss("test-spec-scaled", override=True)(other)
    assert get_loss_spec("test-spec-scaled").fn is other and not get_loss_spec("test-spec-scaled").needs_reference


def test_param_model_view_reads_and_writes_the_specs(scaled):
    view = LossParamModels()
    assert view["test-spec-scaled"] is _ScaleParams and "clipped" not in view and "mopd" not in view
    del view["test-spec-scaled"]
    assert get_loss_spec("test-spec-scaled").params is None
    with pytest.raises(ValueError, match="has no parameter model"):
        get_loss_spec("test-spec-scaled").params_of(_algo(params={"scale": 2}))
    view["test-spec-scaled"] = _ScaleParams
    assert get_loss_spec("test-spec-scaled").params_of(_algo(params={"scale": 2})) == {"scale": 2.0}
    POLICY_LOSSES.remove("test-spec-scaled")
    assert view.pop("test-spec-scaled", None) is None  # gone with its loss
