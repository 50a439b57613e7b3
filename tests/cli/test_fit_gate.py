"""``otfair fit`` states its estimate and needs ``--yes`` above ``--confirm-above`` hours.

The estimate comes from 2- and 1-epoch pilot fits (the sweep's rule), ``--max-violation``'s
from FairnessCV's own pilots on one fold (folds x one fold, and the refit); the gate refuses
before the real fit, with the estimate in the one error line and exit code 2. Progress
and notes go to stderr, so that ``--json`` output stays parseable.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from otfair.estimators._strength_grids import GRIDS
from otfair_lab.cli import app

GRIDS_OTF = GRIDS["otf"]


def _fit(*args):
    return CliRunner().invoke(app, ["fit", "--dataset", "synthetic", *map(str, args)])


def test_long_fit_is_refused_with_its_estimate(monkeypatch):
    import otfair_lab.experiments._single as single

    calls = []
    real = single.run_single

    def counting(*args, **kwargs):
        calls.append(kwargs.get("epochs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(single, "run_single", counting)
    # 100000 epochs take far more than 0.36 s (--confirm-above 0.0001 h) on any machine:
    # arithmetic says so (100000 epochs of at least a step each), before any pilot
    res = _fit(
        "--method", "unfair", "--epochs", "100000", "--max-train-rows", "300", "--json",
        "--confirm-above", "0.0001",
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "by arithmetic alone" in res.output and "--yes" in res.output
    assert calls == []  # no pilot, no fit
    # past the arithmetic bound (here set to nothing), the pilots estimate the fit: 300
    # epochs plus the whole command (checks, pilots) take more than 3.6 ms on any machine
    import otfair_lab.experiments._value_checks as value_checks

    monkeypatch.setattr(value_checks, "STEP_FLOOR_S", {"cpu": 0.0, "other": 0.0})
    monkeypatch.setattr(value_checks, "ROW_FLOOR_S", {"cpu": 0.0, "other": 0.0})
    res = _fit(
        "--method", "unfair", "--epochs", "300", "--max-train-rows", "300", "--json",
        "--confirm-above", "0.000001",
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "estimated" in res.output and "--yes" in res.output
    # a tiny warm-up fit (one-time costs), the two pilots (and a 10-epoch one when their
    # difference is below the noise): the 300-epoch fit never started
    assert sorted(calls)[:3] == [1, 1, 2] and set(calls) <= {1, 2, 10}


def test_confirm_above_zero_needs_yes_and_yes_runs(monkeypatch):
    refused = _fit(
        "--method", "unfair", "--epochs", "3", "--max-train-rows", "300", "--confirm-above", "0"
    )
    assert refused.exit_code == 2 and "--confirm-above" in refused.output
    ran = _fit(
        "--method", "unfair", "--epochs", "3", "--max-train-rows", "300", "--confirm-above", "0",
        "--yes", "--json",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output


def test_the_pilots_warnings_are_not_the_runs(data_dir):
    """A 2-epoch timing pilot of a capped L-BFGS fit warns; the estimate keeps it quiet."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from otfair_lab.experiments._fit_estimate import estimate_fit
    from otfair_lab.experiments._single import run_single

    run = {"dataset": "german", "method": "otf", "epochs": 4}
    run["method_options"] = {"solver": "lbfgs", "tol": 1e-8}
    with pytest.warns(ConvergenceWarning):  # what a pilot alone says
        run_single(**{**run, "epochs": 2})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert estimate_fit(run) is not None
    assert not caught, [str(w.message) for w in caught]


def test_estimate_is_printed_and_json_stays_pure():
    from otfair_lab.experiments._fit_estimate import estimate_fit

    run = {"dataset": "synthetic", "method": "unfair", "epochs": 4, "max_train_rows": 300}
    estimate = estimate_fit(run)
    assert estimate is not None and estimate.epochs == 4
    assert estimate.low < estimate.whole_s < estimate.high
    assert estimate.whole_s == estimate.spent_s + estimate.seconds  # pilots included
    from otfair.estimators._strength_grids import GRIDS
    from otfair_lab.experiments._fit_estimate import budget_fits

    otf = {**run, "method": "otf"}
    seconds, words = budget_fits(otf, 3)  # 3 folds x the path piloted on 2/3 of the rows
    assert seconds > 0 and f"3 folds x a path of up to {len(GRIDS['otf'])} strengths" in words
    budget = estimate_fit(otf, cv=3, before_s=1.5)  # --max-violation: the CV's fits too
    assert budget is not None
    grid = len(GRIDS["otf"])  # the default grid FairnessCV searches
    assert f"FairnessCV: 3 folds x a path of up to {grid} strengths" in budget.describe()
    assert "from FairnessCV pilots" in budget.describe()
    assert budget.whole_s == pytest.approx(1.5 + budget.spent_s + budget.seconds)
    assert estimate_fit({**run, "epochs": 2}) is None  # no pilot for a 2-epoch fit
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["fit", "--dataset", "synthetic", "--method", "unfair", "--epochs", "4"]
        + ["--max-train-rows", "300", "--json", "--progress"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_train"] == 300  # stdout is only the JSON
    assert "estimated" in res.stderr


def _pilots(monkeypatch, fake=None):
    """Record ``budget_fits``' FairnessCV pilots: ``(epochs, params, budgeted, pilot)``."""
    import otfair_lab.experiments._fit_estimate as fit_estimate

    seen = []
    real = fit_estimate._search_pilot

    def pilot(estimator, split, fold, epochs, params, *, budgeted=False):
        assert len(fold[0]) + len(fold[1]) == len(split.y_train)  # one fold of the rows
        done = (fake or real)(estimator, split, fold, epochs, params, budgeted=budgeted)
        seen.append((epochs, dict(params), budgeted, done))
        return done

    monkeypatch.setattr(fit_estimate, "_search_pilot", pilot)
    return seen


def test_the_budget_estimate_is_folds_times_one_fold_and_the_refit(monkeypatch):
    """Adam: FairnessCV on one fold at 1 and 10 epochs, extrapolated; never a full fit.

    Each fold's path is one stacked run of all the strengths (not one fit per strength),
    and the run is ``cv`` such folds and one refit: with a fold of 10 s + 1 s an epoch
    and a refit of 2 s an epoch, 3 folds of 40 epochs are 3 x 50 s + 80 s.
    """
    from types import SimpleNamespace

    from otfair_lab.experiments._fit_estimate import SearchPilot, budget_fits

    def fake(estimator, split, fold, epochs, params, *, budgeted=False):
        return SearchPilot(10.0 + epochs, 2.0 * epochs, SimpleNamespace())

    seen = _pilots(monkeypatch, fake)
    run = {"dataset": "synthetic", "method": "gapreg", "epochs": 40, "max_train_rows": 300}
    seconds, words = budget_fits(run, 3, 0.05)
    assert [epochs for epochs, *_ in seen] == [1, 10, 1, 10]  # the faster of two each
    assert not any(budgeted for _, _, budgeted, _ in seen)
    assert 230.0 <= seconds < 230.0 + 30.0  # + the data preparation (a loaded machine)
    assert "(50 s each, from 1- and 10-epoch pilots) and the refit (80 s)" in words


def test_an_lbfgs_budget_estimate_times_one_folds_real_search(monkeypatch):
    """L-BFGS: one fold's real search (ascending, stopped when settled) at full length.

    Its fits stop at their convergence, far below the iteration cap, and FairnessCV's
    ascending search warm-starts the strengths and stops once the choice is settled:
    one fold's search at the run's own budget is timed and counted ``cv`` times, not
    ``cv`` x strengths x the capped iterations.
    """
    from otfair_lab.experiments._fit_estimate import budget_fits

    seen = _pilots(monkeypatch)
    run = {"dataset": "synthetic", "method": "otf", "max_train_rows": 2000}
    run["method_options"] = {"solver": "lbfgs", "tol": 1e-4}
    seconds, words = budget_fits(run, 3, 0.05, "dp_gap")
    assert [(epochs, budgeted) for epochs, _, budgeted, _ in seen] == [(1, False), (100, True)]
    assert seen[1][1] == {"max_violation": 0.05, "metric": "dp_gap"}
    real = seen[1][3]
    strengths = real.search.cv_results_["strength"]
    assert 0 < len(strengths) - 1 < len(GRIDS_OTF)  # the ascent stopped when settled
    assert seconds >= 3 * real.fold_s + real.refit_s
    assert "as one fold's search took at full length" in words


@pytest.mark.parametrize("flag", ["--no-progress", "--progress"])
def test_progress_never_reaches_stdout(flag):
    res = _fit("--method", "unfair", "--epochs", "2", "--max-train-rows", "300", "--json", flag)
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)


def test_the_epochs_floor_names_the_batches_the_method_uses_on_that_dataset():
    # FTM trains on German in the paper's 200-row batches, not its default 1024
    from otfair_lab.cli._checks import _run_floor
    from otfair_lab.experiments.methods._settings import paper_settings

    german = paper_settings("german", "ftm")["batch_size"]
    floor, batch = _run_floor({"method": "ftm", "dataset": "german", "epochs": 10})
    assert batch == german == 200 and floor is not None and floor > 0
    _, default = _run_floor({"method": "ftm", "dataset": "adult", "epochs": 10})
    assert default == paper_settings("adult", "ftm")["batch_size"]
    res = CliRunner().invoke(
        app, ["fit", "--dataset", "german", "--method", "ftm", "--epochs", "100000000"]
    )
    assert res.exit_code == 2 and "mini-batches of 200" in res.output, res.output


def test_a_randomized_method_names_its_draws_beside_the_panel():
    res = CliRunner().invoke(
        app, ["fit", "--dataset", "synthetic", "--method", "reduction", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert 0.0 <= out["drawn_accuracy"] <= 1.0 and "drawn_dp_gap" in out
    assert f"accuracy {out['drawn_accuracy']:.4f}" in res.stderr
    assert "predicts by drawing each label" in res.stderr


def test_an_lbfgs_fit_announces_iterations_not_epochs():
    res = CliRunner().invoke(
        app, ["fit", "--dataset", "synthetic", "--method", "otf", "-o", "solver=lbfgs"]
    )
    assert res.exit_code == 0, res.output
    assert "training full-batch L-BFGS, at most 100 iterations," in res.stderr
    assert "training 100 epochs" not in res.stderr
