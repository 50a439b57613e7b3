"""Issue 18 regression: FTM's loop with the penalty off trains as well as unfair-mlp.

At lambda = 0 FTM's objective is the (group re-weighted) cross-entropy of unfair-mlp on
the same network, optimizer and learning-rate schedule; only the batches differ
(matched group pairs of 2m points). Before the fix, FTM took ceil(max(n0, n1) / m)
steps per epoch (3 on German) against unfair-mlp's ceil(n / m) (4) under a learning rate
decayed x0.95 per epoch, and reached 0.722 mean test accuracy over seeds 0-2 against
0.75. The paper settings (App. D.1: German m = 200, 200 epochs) run end to end.
"""

import numpy as np
import pytest

from otfair_lab.experiments import run_single


@pytest.mark.slow
def test_ftm_at_lambda0_matches_unfair_mlp_on_german():
    acc = {
        method: np.mean(
            [
                run_single("german", method, strength=strength, seed=seed)["accuracy"]
                for seed in range(3)
            ]
        )
        # unfair-mlp has no strength (passing one is an error); FTM's penalty is off at 0
        for method, strength in (("unfair-mlp", None), ("ftm", 0.0))
    }
    assert acc["ftm"] >= acc["unfair-mlp"] - 0.01, acc
