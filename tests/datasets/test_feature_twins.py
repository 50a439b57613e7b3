"""How many training rows have an exact feature twin in the other group (docs/budget.md).

The OTF penalty moves score mass at the feature distance between rows, so a dataset where
many rows have an identical row in the other group lets OTF explain a DP gap at no cost;
``docs/budget.md`` ("Why OTF barely moves on COMPAS") quotes these shares.
"""

import numpy as np
import pytest

from otfair.datasets import load_dataset


def twin_share(X: np.ndarray, s: np.ndarray) -> float:
    """Share of rows whose exact feature vector also occurs in the other group."""
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = np.ravel(inverse)
    groups = np.zeros((inverse.max() + 1, 2), dtype=bool)
    groups[inverse, (np.asarray(s) == s[0]).astype(int)] = True
    shared = groups.all(axis=1)
    return float(shared[inverse].mean())


def test_twin_share_on_a_hand_made_case():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 3.0], [2.0, 3.0], [5.0, 5.0]])
    s = np.array([0, 1, 0, 0, 1])
    # rows 0 and 1 are twins across the groups; rows 2-3 share a group; row 4 is alone
    assert twin_share(X, s) == pytest.approx(2 / 5)


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [("compas", 0.5, 1.0), ("dutch", 0.5, 1.0), ("adult", 0.0, 0.1), ("german", 0.0, 0.0)],
)
def test_feature_twin_shares_quoted_in_the_budget_guide(name, low, high):
    split = load_dataset(name).split(test_size=0.3, random_state=0)
    share = twin_share(split.X_train, split.s_train)
    assert low <= share <= high


def _otf0_per_gap(name: str, *, charge_twins: bool) -> float:
    """OTF0 of a logistic model's scores on 1,000 training rows, over their mean-score gap."""
    import torch
    from sklearn.linear_model import LogisticRegression

    from otfair.ot import euclidean_cost, otf0

    split = load_dataset(name).split(test_size=0.3, random_state=0)
    rows = np.random.default_rng(0).choice(len(split.y_train), 1000, replace=False)
    X, y, s = split.X_train[rows], split.y_train[rows], split.s_train[rows]
    h = LogisticRegression(max_iter=1000).fit(X, y).predict_proba(X)[:, 1]
    g = (s == s[0]).astype(float)
    G = torch.as_tensor((g / g.mean() - 1.0)[None, :])
    Xt = torch.as_tensor(X, dtype=torch.float64)
    C = euclidean_cost(Xt, Xt)
    C = C / C.mean()
    if charge_twins:  # an exact twin (zero distance, off the diagonal) costs the mean distance
        twins = C < 1e-9
        twins.fill_diagonal_(False)
        C[twins] = 1.0
    gap = abs(h[g == 1].mean() - h[g == 0].mean())
    return float(otf0(torch.as_tensor(h, dtype=torch.float64), C, G, 1e-3)) / gap


def test_twins_make_otf_cheap_on_compas():
    """The mechanism docs/budget.md states: free moves between twins keep OTF0 small."""
    compas = _otf0_per_gap("compas", charge_twins=False)
    # charging the twins makes the same scores' OTF0 over ten times larger ...
    assert _otf0_per_gap("compas", charge_twins=True) > 10 * compas
    # ... and per unit gap, COMPAS's OTF0 is over a hundred times below Adult's
    assert _otf0_per_gap("adult", charge_twins=False) > 100 * compas
