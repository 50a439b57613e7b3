"""A warning raised inside ``fit`` names the user's line, not otfair's wrappers."""

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning
from tests.estimators._classif_data import two_group_data

from otfair.estimators import FairClassifier, FairnessCV, FitQualityWarning
from otfair.utils._warnings import user_stacklevel


def _caught(call, category):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    found = [w for w in seen if issubclass(w.category, category)]
    assert found, f"no {category.__name__}"
    return found


def test_fit_warnings_point_at_the_callers_line():
    X, y, s = two_group_data(n=300, seed=0)
    cases = [
        # below the best constant: a strength that outweighs the labels
        (lambda: FairClassifier("norm", 0.99, random_state=0).fit(X, y, sensitive_features=s),
         FitQualityWarning),
        # the cap before tol
        (lambda: FairClassifier(epochs=1, random_state=0).fit(X, y), ConvergenceWarning),
        # raw feature scales
        (lambda: FairClassifier(random_state=0).fit(X * 1e6, y), FitQualityWarning),
    ]  # fmt: skip
    for call, category in cases:
        for w in _caught(call, category):
            assert w.filename == __file__, (category.__name__, w.filename, str(w.message))


def test_a_searchs_warning_points_at_the_search_call():
    X, y, s = two_group_data(n=300, seed=0)
    # a huge additive strength, trained as the papers train: the model collapses
    collapsing = FairClassifier(
        "gapreg",
        solver="adam",
        epochs=4,
        batch_size=100,
        lr=0.05,
        tol=None,
        init_intercept=False,
        random_state=0,
    )
    search = FairnessCV(
        collapsing,
        strengths=[1e4],
        max_violation=1.0,
        cv=2,
        below_constant="warn",
        refit=False,
    )
    found = _caught(lambda: search.fit(X, y, sensitive_features=s), UserWarning)
    chosen = [w for w in found if "Chosen anyway" in str(w.message)]
    assert chosen and all(w.filename == __file__ for w in chosen)


def test_user_stacklevel_counts_the_frames_up_to_the_caller():
    def direct() -> int:
        return user_stacklevel()

    assert direct() == 1  # this test module is outside otfair: the function itself
    from otfair.utils import _warnings as module

    namespace = {"user_stacklevel": user_stacklevel}
    code = "def inner():\n    return user_stacklevel()\ndef outer():\n    return inner()\n"
    exec(compile(code, module.__file__, "exec"), namespace)
    # frames compiled under otfair's file name count as otfair's: inner, outer, then here
    assert namespace["outer"]() == 3
