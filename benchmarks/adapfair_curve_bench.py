"""An AdapFair lambda curve: one curve fit (shared base classifier) vs K separate fits.

Usage: ``python benchmarks/adapfair_curve_bench.py [--quick] [--json]``. Public API only
(the method registry's ``adapfair`` builder, as ``otfair sweep`` runs it); one torch
thread and one BLAS thread; CPU seconds of this process (``time.process_time``). Rows, on
the seed-0 splits of the AdapFair config's scenarios: Law School (bar passage, race;
standard) and Diabetes (female -> male drift: the base classifier trains on the source
domain):

* ``K separate``: K calls ``build(lam_k).fit`` (each trains the frozen 2x20 base
  classifier, 50 epochs, then its flows);
* ``curve``: one ``fairness_path(build(...), ..., strengths=[...])``: the base classifier once,
  then K sets of flows; the models equal the separate fits (tests/estimators/
  test_adapfair_curve.py);
* ``speed-up`` = separate / curve. The flows themselves are not stacked: each lambda's
  flows train on their own (a compute-bound step, as for the MLP penalties,
  docs/stacking.md), so the gain is the base classifier's share.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from _common import bench_main, cpu_seconds, fit_at, markdown_table

from otfair.datasets import load_dataset, load_domain_shift
from otfair_lab.experiments.methods import get_method

LAMS = (0.9, 0.7, 0.5, 0.3, 0.1)


def _scenarios(quick: bool) -> dict[str, tuple[Any, Any]]:
    law = load_dataset("law_school", task="classification").split(
        random_state=0, sensitive_as_input=True
    )
    out: dict[str, tuple[Any, Any]] = {"law_school": (law, None)}
    if not quick:
        pair = load_domain_shift("diabetes", source="female", target="male")
        src, tgt = pair.split(random_state=0, sensitive_as_input=True)  # one feature space
        out["diabetes (female -> male)"] = (tgt, (src.X_train, src.y_train, src.s_train))
    return out


def _fit(lam: Any, split: Any, fit_kw: dict[str, Any], epochs: int) -> None:
    est = get_method("adapfair").build(0.5, random_state=0, epochs=epochs)
    fit_at(est, split.X_train, split.y_train, lam, **fit_kw)


def run(quick: bool = False) -> dict[str, Any]:
    """Time the curve and the separate fits per scenario and K."""
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    epochs = 5 if quick else 50
    rows = []
    with threadpool_limits(1):
        for name, (split, source) in _scenarios(quick).items():
            fit_kw: dict[str, Any] = {"sensitive_features": split.s_train}
            if source is not None:
                fit_kw["source_data"] = source
            for k in (2, 5) if not quick else (2,):
                lams = list(LAMS[:k])
                separate = cpu_seconds(lambda: [_fit(a, split, fit_kw, epochs) for a in lams])  # noqa: B023
                curve = cpu_seconds(lambda: _fit(lams, split, fit_kw, epochs))  # noqa: B023
                rows.append(
                    {
                        "scenario": name,
                        "K": k,
                        "separate_s": separate,
                        "curve_s": curve,
                        "speedup": separate / curve,
                    }
                )
    return {"epochs": epochs, "rows": rows, "lams": list(LAMS)}


def format_rows(result: dict[str, Any]) -> str:
    """Return the markdown table of :func:`run`."""
    body = [
        [
            r["scenario"],
            str(r["K"]),
            f"{r['separate_s']:.1f}",
            f"{r['curve_s']:.1f}",
            f"{r['speedup']:.2f}x",
        ]
        for r in result["rows"]
    ]
    header = ["scenario", "K", "K separate fits (CPU s)", "curve (CPU s)", "speed-up"]
    lines = [f"AdapFair curve vs separate fits, {result['epochs']} flow epochs", ""]
    return "\n".join(lines + markdown_table(header, body))


if __name__ == "__main__":
    np.seterr(all="ignore")
    bench_main(__doc__, run, format_rows)
