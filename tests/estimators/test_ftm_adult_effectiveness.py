import numpy as np
import pytest

from otfair.datasets import load_dataset
from otfair.estimators.classification.fair_classifier import FairClassifier
from otfair.penalties import FTM


@pytest.mark.slow
def test_adult_dp_gap_falls_as_lambda_grows():
    split = load_dataset("adult").split(random_state=0, sensitive_as_input=True)
    rng = np.random.default_rng(0)
    idx = rng.choice(len(split.y_train), 6000, replace=False)
    X, y, s = split.X_train[idx], split.y_train[idx], split.s_train[idx]
    gaps, accs = [], []
    for lam in (0.0, 0.5, 2.0):
        clf = FairClassifier(FTM(group_batch_size=512), lam, model="mlp", epochs=8, lr=3e-3,
                             lr_decay=0.95, random_state=0)  # fmt: skip
        clf.fit(X, y, sensitive_features=s)
        p = clf.predict_proba(split.X_test)[:, 1]
        st = split.s_test
        gaps.append(abs(p[st == 0].mean() - p[st == 1].mean()))
        accs.append(clf.score(split.X_test, split.y_test))
    assert gaps[0] > gaps[1] > gaps[2], gaps
    assert gaps[2] < 0.5 * gaps[0]
    assert accs[1] > accs[0] - 0.03, (accs, gaps)
