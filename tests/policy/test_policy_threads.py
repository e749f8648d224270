import pytest
import torch

from swetrain.policy import threads


def test_default_is_one_thread(monkeypatch):
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert threads.configure_torch_threads(force=True) == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_env_override_and_auto(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv(threads.ENV_VAR, "2")
        assert threads.configure_torch_threads(force=True) == 2
        torch.set_num_threads(1)
        monkeypatch.setenv(threads.ENV_VAR, "auto")
        assert threads.requested_threads() is None
        assert threads.configure_torch_threads(force=True) == 1  # auto leaves torch untouched
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_bad_env_value_is_named(monkeypatch, bad):
    monkeypatch.setenv(threads.ENV_VAR, bad)
    with pytest.raises(ValueError, match="SWETRAIN_TORCH_THREADS"):
        threads.requested_threads()


def test_update_threads_and_scoped_threads(monkeypatch):
    import os

    monkeypatch.delenv(threads.UPDATE_ENV_VAR, raising=False)
    assert threads.update_threads() == len(os.sched_getaffinity(0)) == threads.usable_cores()  # every usable core
    monkeypatch.setenv(threads.UPDATE_ENV_VAR, "3")
    assert threads.update_threads() == 3
    for bad in ("0", "x"):
        monkeypatch.setenv(threads.UPDATE_ENV_VAR, bad)
        with pytest.raises(ValueError, match="SWETRAIN_UPDATE_THREADS"):
            threads.update_threads()
    before = torch.get_num_threads()
    with threads.torch_threads(before + 1):
        assert torch.get_num_threads() == before + 1
    assert torch.get_num_threads() == before  # restored
