"""Notion objects: names, label cells, conversion from strings, linear rows per cell."""

import numpy as np
import pytest

from otfair.notions import (
    DemographicParity,
    EqualizedOdds,
    EqualOpportunity,
    LinearConstraints,
    as_notion,
)


def test_as_notion_and_cells():
    assert as_notion("dp") == DemographicParity()
    assert as_notion(EqualizedOdds()).label_cells == (0, 1)
    assert as_notion("eopp").label_cells == (1,)
    assert not as_notion("dp").requires_labels and as_notion("eo").requires_labels
    with pytest.raises(ValueError, match="`notion` must be one of dp, eopp, eo; got 'xx'"):
        as_notion("xx")
    with pytest.raises(ValueError, match="must be one of dp, eo"):
        as_notion(EqualOpportunity(), allowed=("dp", "eo"))


def test_eopp_rows_are_the_positive_cell_of_eo():
    """The EOpp matrix is the Y=1 block of the EO matrix (rows built per label cell)."""
    rng = np.random.default_rng(0)
    s = (rng.random(200) < 0.4).astype(int)
    y = (rng.random(200) < 0.5).astype(int)
    G_eo = LinearConstraints("eo").fit(s, y).matrix(s, y).numpy()
    G_eopp = LinearConstraints(EqualOpportunity()).fit(s, y).matrix(s, y).numpy()
    assert G_eo.shape == (4, 200) and G_eopp.shape == (2, 200)
    np.testing.assert_allclose(G_eopp, G_eo[2:])
    # a constant score satisfies every row (P(Yhat=1 | S, Y=1) = P(Yhat=1 | Y=1))
    np.testing.assert_allclose(G_eopp @ np.full(200, 0.3), 0.0, atol=1e-5)
