"""AdapFair scenarios: base classifier training, drift, new notion, registry, CLI panel."""

import io

import numpy as np
import pytest
import torch
from _classif_data import drift_data as _data
from fairlearn.metrics import equalized_odds_difference

from otfair.estimators.preprocessing.adapfair_base import train_base_classifier
from otfair.estimators.preprocessing.adapfair_classifier import AdapFairClassifier
from otfair_lab.experiments.methods import get_method


def _state_bytes(module):
    buf = io.BytesIO()
    torch.save(module.state_dict(), buf)
    return buf.getvalue()


def _small(**kw):
    return AdapFairClassifier(epochs=3, base_epochs=5, random_state=0, **kw)


def test_base_classifier_is_the_papers_mlp_and_learns():
    X, y, _ = _data()
    model = train_base_classifier(X, y, epochs=30, random_state=0)
    hidden = [m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert hidden == [20, 20, 1]
    assert not model.training
    with torch.no_grad():
        acc = ((model(torch.as_tensor(X))[:, 0] > 0).numpy() == y).mean()
    assert acc > 0.75  # the label is a noisy threshold of two features


def test_drift_trains_base_on_source_and_flows_on_target():
    X_src, y_src, s_src = _data(seed=1)
    X_tgt, y_tgt, s_tgt = _data(seed=2, shift=1.0)
    est = _small().fit(X_tgt, y_tgt, sensitive_features=s_tgt, source_data=(X_src, y_src, s_src))
    on_source = train_base_classifier(X_src, y_src, epochs=5, random_state=0)
    on_target = train_base_classifier(X_tgt, y_tgt, epochs=5, random_state=0)
    assert _state_bytes(est.base_classifier_) == _state_bytes(on_source)
    assert _state_bytes(est.base_classifier_) != _state_bytes(on_target)
    with pytest.raises(ValueError, match="feature space"):
        _small().fit(
            X_tgt, y_tgt, sensitive_features=s_tgt, source_data=(X_src[:, :3], y_src, s_src)
        )


def test_given_base_classifier_is_kept_untouched():
    X, y, s = _data()
    base = train_base_classifier(X, y, epochs=5, random_state=1)
    before = _state_bytes(base)
    est = _small(base_classifier=base).fit(X, y, sensitive_features=s)
    assert est.base_classifier_ is base
    assert _state_bytes(base) == before
    with torch.no_grad():
        expected = torch.sigmoid(base(torch.as_tensor(X))[:, 0]).numpy()
    np.testing.assert_allclose(est.baseline_proba(X), expected, atol=1e-7)


def test_sensitive_column_selects_the_flow_and_is_dropped():
    X, y, s = _data()
    Xs = np.column_stack([X, s]).astype(np.float32)
    est = _small(sensitive_column=-1).fit(Xs, y, sensitive_features=s)
    assert est.preprocessor_.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(
        est.predict_proba(Xs), est.preprocessor_.predict_proba(X, sensitive_features=s)
    )
    with pytest.raises(ValueError, match="`sensitive_features` is required"):
        _small().fit(X, y, sensitive_features=s).predict_proba(X)


def test_new_notion_base_trained_for_equalized_odds():
    X, y, s = _data(n=800)
    plain = train_base_classifier(X, y, epochs=40, random_state=0)
    fair = train_base_classifier(
        X, y, sensitive_features=s, penalty="gapreg", notion="eo",
        strength=5.0, epochs=40, random_state=0,
    )  # fmt: skip
    with torch.no_grad():
        pred = {
            k: (m(torch.as_tensor(X))[:, 0] > 0).numpy() for k, m in [("p", plain), ("f", fair)]
        }
    eo_plain = equalized_odds_difference(y, pred["p"], sensitive_features=s)
    eo_fair = equalized_odds_difference(y, pred["f"], sensitive_features=s)
    assert eo_fair < 0.7 * eo_plain
    with pytest.raises(ValueError, match="`penalty` must be one of"):
        train_base_classifier(X, y, penalty="x")


def test_registered_methods_build_the_right_estimators():
    aware = get_method("adapfair")
    blind = get_method("adapfair-blind")
    assert aware.sensitive_as_input and not blind.sensitive_as_input
    assert set(aware.notions) == {"dp", "eopp", "eo"}
    est = aware.build(0.3, notion="eo", random_state=1, epochs=2, device="cpu", dataset=None)
    assert (est.mode, est.notion, est.strength, est.epochs, est.sensitive_column) == (
        "aware", "eo", 0.3, 2, -1
    )  # fmt: skip
    est = blind.build(None, notion=None, random_state=1, epochs=None, device="cpu", dataset=None)
    assert (est.mode, est.notion, est.sensitive_column) == ("blind", "dp", None)


@pytest.mark.parametrize("method", ["adapfair", "adapfair-blind"])
def test_run_single_has_baseline_panel(method):
    from otfair_lab.experiments import run_single

    res = run_single(
        "synthetic", method, seed=0, epochs=2, max_train_rows=400,
        method_options={"base_epochs": 3},
    )  # fmt: skip
    base = res["baseline"]
    assert {"accuracy", "dp_gap"} <= set(base)
    panel_keys = {k for k in res if k in base}
    assert panel_keys == set(base)  # same panel for the untouched classifier
    assert 0.0 <= base["dp_gap"] <= 1.0
