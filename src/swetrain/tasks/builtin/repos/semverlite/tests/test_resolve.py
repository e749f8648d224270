import pytest

from semverlite import ResolutionError, resolve

REG = {
    "app": {"1.0.0": {"web": "^2.0.0", "log": "^1.0.0"}},
    "web": {"2.0.0": {"log": "^1.0.0"}, "2.1.0": {"log": "^1.2.0"}, "3.0.0": {}},
    "log": {"1.0.0": {}, "1.1.0": {}, "1.2.0": {}, "2.0.0": {}},
}


def test_picks_newest_compatible():
    assert resolve(REG, {"web": "^2.0.0"}) == {"log": "1.2.0", "web": "2.1.0"}


def test_transitive_from_root():
    assert resolve(REG, {"app": "*"}) == {"app": "1.0.0", "log": "1.2.0", "web": "2.1.0"}


def test_backtracks_on_conflict():
    # root pins log below 1.2 so web 2.1.0 (needs ^1.2.0) must be rejected in favour of 2.0.0
    assert resolve(REG, {"web": "^2.0.0", "log": "<1.2.0"}) == {"log": "1.1.0", "web": "2.0.0"}


def test_no_deps_package():
    assert resolve(REG, {"web": ">=3.0.0"}) == {"web": "3.0.0"}


def test_unsatisfiable():
    with pytest.raises(ResolutionError, match="cannot satisfy"):
        resolve(REG, {"web": "^2.0.0", "log": ">=2.0.0"})


def test_unknown_package():
    with pytest.raises(ResolutionError, match="unknown package"):
        resolve(REG, {"nope": "*"})


def test_conflict_with_already_chosen():
    reg = {
        "a": {"1.0.0": {"c": "1.0.0"}},
        "b": {"1.0.0": {"c": "2.0.0"}, "0.9.0": {"c": "1.0.0"}},
        "c": {"1.0.0": {}, "2.0.0": {}},
    }
    assert resolve(reg, {"a": "*", "b": "*"}) == {"a": "1.0.0", "b": "0.9.0", "c": "1.0.0"}


def test_step_limit():
    reg = {"a": {f"1.0.{i}": {"b": "9.9.9"} for i in range(50)}, "b": {"1.0.0": {}}}
    with pytest.raises(ResolutionError, match="step limit"):
        resolve(reg, {"a": "*"}, max_steps=10)
