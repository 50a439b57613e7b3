"""AdapFair claim A1 on Crime, DP: AdapFair's floor, its lambda grid or the method.

On the committed 5 runs (claims.md, A1) only the OT baselines reach a DP gap below
AdapFair's lowest (0.0695 at lambda 0.1, the end of the paper's grid {0.9, ..., 0.1}): the
barycenter post-processing (``wb-postprocess``) and OT repair reach ~0.05. AdapFair's
objective is lambda CE + (1 - lambda) W2, so lambda < 0.1 weighs the fairness term more.
This script reruns ``adapfair`` (DP, aware) on the report's 5 splits with the config's
Crime options, at the paper's lowest lambda (0.1, a check against the committed runs) and
below it, lambda in {0.05, 0.02, 0.01}, and compares the extended front with the committed
baselines' runs (same splits: paired by seed) with
:func:`otfair_lab.reproduction.compare_fronts` at the baselines' DP levels below 0.10.

If AdapFair then reaches the baselines' low levels at their accuracy, the "does not hold"
is the grid's; if it does not, the floor is the method's on Crime.

Writes ``crime_dp_grid.csv`` (one row per run) and ``crime_dp_grid.md``. Run from a
checkout (~1 min):

    OTFAIR_DATA_DIR=... python docs/reproduction/adapfair/crime_dp_grid.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from otfair_lab.experiments import load_archive, run_single
from otfair_lab.reproduction import compare_fronts

HERE = Path(__file__).parent
SEEDS = (0, 1, 2, 3, 4)
LAMBDAS = (0.1, 0.05, 0.02, 0.01)
CRIME = {"task": "classification", "sensitive": "minority", "features": 6}
BASELINES = ("wb-postprocess", "ot-repair")
BELOW = 0.10


def run_adapfair() -> pd.DataFrame:
    """AdapFair (DP, aware) at ``LAMBDAS`` on each seed's split: one row per run."""
    rows = []
    for seed in SEEDS:
        for lam in LAMBDAS:
            res = run_single(
                "communities_crime", "adapfair", strength=lam, seed=seed, notion="dp",
                dataset_options=CRIME,
            )  # fmt: skip
            rows.append({"label": "adapfair [dp]", "strength": lam, "seed": seed,
                         "accuracy": res["accuracy"], "dp_gap": res["dp_gap"]})  # fmt: skip
        print("seed", seed, "done", flush=True)
    return pd.DataFrame(rows)


def report(new: pd.DataFrame) -> str:
    """Return ``crime_dp_grid.md`` for the runs ``new`` and the committed baselines' runs."""
    runs = load_archive(HERE / "runs")
    crime = runs[runs["dataset"] == "crime"]
    committed = crime[crime["label"] == "adapfair [dp]"]
    check = new[new["strength"] == 0.1].merge(
        committed, on=["strength", "seed"], suffixes=("", "_run")
    )
    diff = float((check["accuracy"] - check["accuracy_run"]).abs().max())
    base = crime[crime["label"].isin(BASELINES)][["label", "strength", "seed", "accuracy",
                                                  "dp_gap"]]  # fmt: skip
    frame = pd.concat([new, base], ignore_index=True)
    table = compare_fronts(frame, "adapfair [dp]", BASELINES, performance="accuracy",
                           fairness="dp_gap")  # fmt: skip
    low = table[(table["direction"] == "at the baseline's levels") & (table["level"] < BELOW)]
    means = new.groupby("strength")[["accuracy", "dp_gap"]].agg(["mean", "std"])
    md = [
        "# AdapFair on Crime, DP: the lambda grid extended below the paper's 0.1",
        "",
        "Written by [crime_dp_grid.py](crime_dp_grid.py) (its docstring has the question and "
        f"the protocol): `adapfair` (DP, aware) on seeds {', '.join(map(str, SEEDS))} with the "
        "config's Crime options; all runs: [crime_dp_grid.csv](crime_dp_grid.csv). At lambda "
        "0.1 the runs "
        + (
            "equal the committed ones (to 4 decimals)."
            if diff < 5e-5
            else f"differ from the committed ones by up to {diff:.4f} in accuracy."
        ),
        "",
        "## AdapFair, mean (std) over the seeds",
        "",
        "| lambda | accuracy | DP gap |",
        "|---|---|---|",
    ]
    for lam, r in means.sort_index(ascending=False).iterrows():
        md.append(
            f"| {lam:g} | {r[('accuracy', 'mean')]:.4f} ({r[('accuracy', 'std')]:.4f}) | "
            f"{r[('dp_gap', 'mean')]:.4f} ({r[('dp_gap', 'std')]:.4f}) |"
        )
    md += [
        "",
        f"## At the baselines' DP levels below {BELOW:.2f} (committed runs, paired by seed)",
        "",
        "| baseline | DP level | baseline strength | baseline accuracy | AdapFair lambda | "
        "AdapFair accuracy | d | SE | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in low.itertuples(index=False):
        if pd.isna(r.target_value):
            verdict = r.verdict.replace("target", "AdapFair")
            md.append(f"| {r.baseline} | {r.level:.4f} | - | - | - | - | - | - | {verdict} |")
            continue
        md.append(
            f"| {r.baseline} | {r.level:.4f} | {r.baseline_strength:g} | "
            f"{r.baseline_value:.4f} | {r.target_strength:g} | {r.target_value:.4f} | "
            f"{r.d:+.4f} | {r.se:.4f} | {r.verdict.replace('target', 'AdapFair')} |"
        )
    lowest = frame.groupby(["seed", "label"])["dp_gap"].min().unstack("label")
    md += [
        "",
        "## Per split: the lowest DP gap each method reaches over its strengths",
        "",
        "| seed | " + " | ".join(lowest.columns) + " |",
        "|---|" + "---|" * len(lowest.columns),
    ]
    for seed, r in lowest.iterrows():
        md.append(f"| {seed} | " + " | ".join(f"{v:.4f}" for v in r) + " |")
    md.append("")
    return "\n".join(md)


def main() -> None:
    """Run, compare with the committed baselines, write the CSV and the markdown."""
    new = run_adapfair()
    new.to_csv(HERE / "crime_dp_grid.csv", index=False, float_format="%.6g")
    new = pd.read_csv(HERE / "crime_dp_grid.csv")  # the report shows what the CSV holds
    (HERE / "crime_dp_grid.md").write_text(report(new), encoding="utf-8")


if __name__ == "__main__":
    main()
