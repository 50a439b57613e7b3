"""set_params_from_init: the scikit-learn parameter contract (get/set_params, clone)."""

import pytest
from sklearn.base import BaseEstimator, clone

from otfair.estimators import CENet, CODRegressor, FairClassifier, OTRepair
from otfair.utils import set_params_from_init


class _Toy(BaseEstimator):
    def __init__(self, eps: float = 0.1, *, hidden: tuple = (3,), random_state=None) -> None:
        set_params_from_init(self, locals())


class _ToyChild(_Toy):
    def __init__(
        self, eps: float = 0.1, *, hidden: tuple = (3,), random_state=None, lam: float = 1.0
    ) -> None:
        super().__init__(eps, hidden=hidden, random_state=random_state)  # `__class__` in locals()
        set_params_from_init(self, locals())


def test_stores_arguments_as_they_are():
    hidden = [4, 5]
    est = _Toy(0.5, hidden=hidden)
    assert est.get_params() == {"eps": 0.5, "hidden": [4, 5], "random_state": None}
    assert est.hidden is hidden  # no copy: clone's identity check relies on it


@pytest.mark.parametrize(
    "est",
    [
        _Toy(0.2, hidden=(7,), random_state=3),
        _ToyChild(0.3, lam=2.0),
        CENet(0.5, encoder_hidden=(8,), epochs=3, device="cpu"),
        CODRegressor(0.2, ridge=1e-3),
        FairClassifier("gapreg", 0.5, epochs=2, hidden=(4,)),
        OTRepair(0.5, mode="random", columns=[0, 2]),
    ],
    ids=lambda e: type(e).__name__,
)
def test_clone_round_trip(est):
    params = est.get_params()
    twin = clone(est)
    assert type(twin) is type(est)
    assert twin.get_params() == params
    assert twin.set_params(**params).get_params() == params
    assert clone(twin).get_params() == params


def test_set_params_then_clone():
    est = _Toy().set_params(eps=0.9, random_state=1)
    assert clone(est).get_params() == {"eps": 0.9, "hidden": (3,), "random_state": 1}


def test_rejects_locals_that_are_not_parameters():
    class Bad(BaseEstimator):
        def __init__(self, eps: float = 0.1) -> None:
            scaled = 2 * eps  # noqa: F841 - a local that is not a parameter
            set_params_from_init(self, locals())

    with pytest.raises(TypeError, match="`scaled` is not a parameter"):
        Bad()
