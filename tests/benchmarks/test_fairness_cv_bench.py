"""benchmarks/fairness_cv.py: its report counts what it says it counts."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fairness_cv as bench  # noqa: E402


def _row(seed: int, budget: float, test_violation: float | None, eg_dp: float) -> dict:
    row = {"dataset": "adult", "seed": seed, "budget": budget, "n_train": 100, "n_strengths": 8}
    row.update(cv_cpu_s=2.0, cv_wall_s=2.0, gridsearch_cpu_s=8.0 if seed == 0 else float("nan"))
    if test_violation is None:
        row["feasible"] = False
    else:
        row.update(
            feasible=True,
            strength=0.1 * (seed + 1),
            cv_score=0.8,
            cv_violation=budget - 0.01,
            test_score=0.8,
            test_violation=test_violation,
            exceeds=test_violation > budget,
        )
    row.update(eg_accuracy=0.8, eg_dp_gap=eg_dp, eg_exceeds=eg_dp > budget, eg_cpu_s=1.0)
    return row


def test_report_counts_exceedances_feasibility_and_the_cost_ratio():
    case = bench.Case("adult", "classification", "dp_gap", (0.03,), None, bench._norm)
    case.rows = [
        _row(0, 0.03, 0.04, 0.02),  # exceeds; EG within
        _row(1, 0.03, 0.02, 0.05),  # within; EG exceeds
        _row(2, 0.03, None, 0.05),  # infeasible; EG exceeds
    ]
    text = bench.report((case,), "cmd", "settings")
    line = next(ln for ln in text.splitlines() if ln.startswith("| adult | dp_gap"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == "2 / 3"  # feasible splits
    assert cells[4] == "1 / 2"  # test > budget, among the feasible
    assert cells[5] == "0.1, 0.2"  # chosen strengths
    assert cells[-1] == "2 / 3"  # EG over the budget
    assert "| adult | 100 | 8 | 2.0 | 8.0 | 4.0x |" in text
