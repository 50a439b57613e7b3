"""Peers page: otfair's fair classifiers beside fairlearn, fairret and error-parity.

``python benchmarks/peers run [--plan NAME,...] [--only METHOD,...] [--strengths S,...]
[--max-fits N] [--out CSV]`` fits every (plan, method, strength, seed) of
``peers_plan.PLANS`` not yet in ``CSV`` (default ``docs/reproduction/peers/fits.csv``; one
line per fit, appended as soon as the fit ends, so runs can be stopped, resumed or split
over processes).
``python benchmarks/peers report [--out CSV]`` writes ``matched.csv`` and
``tradeoff.png`` next to ``CSV`` and prints the markdown tables of
``docs/reproduction/peers/README.md``.

Protocol
--------
* Data: ``otfair.datasets.load_dataset(name).split(random_state=seed)`` (80/20, train
  statistics), the sensitive attribute *not* an input (every method sees the same ``X``;
  the post-processors and ThresholdOptimizer use the group at predict time, as they must).
* otfair's in-training methods run at :class:`otfair.estimators.FairClassifier`'s
  defaults (its ``solver="auto"``: L-BFGS for the logistic model with Norm, GapReg, OTF
  under DP or no penalty; Adam for the MLP and FTM, up to 300 epochs, stopping on
  ``tol``), the logistic model or the MLP (two ReLU layers of width d, ``hidden=None``,
  the FTM paper's network, not the default one layer of 100). fairret's
  ``NormLoss`` and ``KLProjectionLoss`` (statistic ``PositiveRate``) are added to the
  cross-entropy in a plain torch loop: ``CE + lambda * fairret``, Adam lr 1e-3, 100
  epochs of batches of 1000 stratified by group, FairClassifier's initialization (with
  no loss it reproduces ``FairClassifier("none", solver="adam", tol=None, lr=1e-3,
  init_intercept=False, l2=0)``). FTM trains on its own matched group batches (its
  method).
* fairlearn's ``ExponentiatedGradient`` is the fit inside otfair's
  ``ReductionClassifier`` (sklearn logistic regression); both are reported from the same
  fit: fairlearn's randomized ``predict`` and otfair's ``predict`` (randomized the same
  way by default, so the two agree).
* ``ThresholdOptimizer`` (``tol`` swept) and error-parity's
  ``RelaxedThresholdOptimizer`` (``tolerance`` swept) post-process the unfair model of
  the same family (``FairClassifier("none")``); their fit time includes that model's.
* Metrics on the test part: accuracy and DP gap of the hard (possibly randomized)
  predictions, AUC of the score (the expected positive probability for the randomized
  methods; error-parity only exposes hard predictions, so its AUC is that of 0/1 labels);
  fit time is process CPU seconds (one torch thread), not wall time, on a shared machine.
* Matched DP: per method, the metrics are averaged over seeds for each strength, and the
  strength whose mean test DP gap is the largest one <= the level is reported.
"""

import argparse
from pathlib import Path

from peers_plan import OUT, PLANS, run
from peers_report import report


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("run", "report"))
    parser.add_argument("--plan", default=",".join(PLANS), help="comma-separated plans")
    parser.add_argument("--only", default="", help="comma-separated methods (default: all)")
    parser.add_argument("--out", type=Path, default=OUT, help="fits CSV")
    parser.add_argument("--max-fits", type=int, default=0, help="stop after N fits (0: all)")
    parser.add_argument("--strengths", default="", help="comma-separated strengths only")
    args = parser.parse_args(argv)
    if args.command == "run":
        plans = [p for p in args.plan.split(",") if p]
        unknown = [p for p in plans if p not in PLANS]
        if unknown:
            parser.error(f"unknown plan(s) {unknown}; choose from {sorted(PLANS)}")
        strengths = {float(v) for v in args.strengths.split(",") if v} or None
        only = {m for m in args.only.split(",") if m} or None
        run(plans, only, args.out, args.max_fits, strengths)
    else:
        print(report(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
