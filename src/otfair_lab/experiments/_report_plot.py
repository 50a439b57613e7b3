"""The trade-off plots of a sweep report (performance against a fairness measure).

One line per method (and notion) through its strengths, each point the mean over seeds
with standard-deviation error bars (none, and said so, for a single seed), labelled with
its strength; the Pareto front of all points is circled. A point whose runs predicted a
constant (one class for every test row, or constant scores:
:func:`otfair.metrics.is_constant_prediction`) is crossed out with a red ``x``: its
small fairness gap is not a fair model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["constant_note", "pareto_front"]

_LABELS = {
    "accuracy": "accuracy",
    "auc": "ROC AUC",
    "r2": "R$^2$",
    "dp_gap": "DP gap",
    "mean_score_gap": "mean score gap",
    "wdp": "WDP (W$_1$)",
    "eo_gap": "EO gap",
    "pdp_violation": "PDP violation",
    "peo_violation": "PEO violation",
    "error_gap": "error gap |MSE$_0$ - MSE$_1$|",
    "ksdp": "KSDP",
}


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Mark the points not dominated when minimizing ``x`` and maximizing ``y``.

    Point :math:`i` is dominated if some :math:`j` has :math:`x_j \le x_i` and
    :math:`y_j \ge y_i` with at least one strict inequality.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Violation (lower is better) and performance (higher is better).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        ``True`` for the points on the front (NaN points are never on it).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"`x` and `y` must be 1-D of equal length; got {x.shape}, {y.shape}.")
    ok = np.isfinite(x) & np.isfinite(y)
    front = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        better = (x[ok] <= x[i]) & (y[ok] >= y[i]) & ((x[ok] < x[i]) | (y[ok] > y[i]))
        front[i] = not better.any()
    return front


def _flag_note(agg: pd.DataFrame, column: str, mark: str, said: str) -> str:
    """Return ``mark (n rows[...]): said`` when ``column`` flags rows of ``agg`` (or "")."""
    if column not in agg or not (agg[column] > 0).any():
        return ""
    n = int((agg[column] > 0).sum())
    return f"{mark} ({n} row{'s' if n != 1 else ''}{said}"


def constant_note(agg: pd.DataFrame) -> str:
    """Return the note for a table with constant predictions among its rows (or "")."""
    return _flag_note(
        agg,
        "constant",
        "**constant**",
        ", a red x in the plots): in that many seeds (`constant` = k/n) the model predicted "
        "one class for every test row, or constant scores; its fairness gaps are trivially "
        "small and its accuracy is the majority rate, not a fair model.",
    )


def _clipped_at_zero(mean: Any, std: Any) -> np.ndarray:
    """Error bars ``(below, above)`` of a nonnegative measure: never below 0.

    A violation (a gap, a distance) is at least 0, so ``mean - std`` is not a value it
    can take; the bar stops at 0 and the spread above stays ``std``.
    """
    mean, std = np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    return np.vstack([np.minimum(std, np.maximum(mean, 0.0)), std])


def fit_quality_note(agg: pd.DataFrame) -> str:
    """Return the note for a table with fits that warned of their training (or "")."""
    return _flag_note(
        agg,
        "fit_quality_warning",
        "**below constant (training)**",
        "): in that many seeds the fit ended below the best constant predictor on its "
        "training rows, or predicted one class for every one of them (otfair's "
        "`FitQualityWarning`; the sweep printed why): the method did not optimize there, "
        "so its point says little about the trade-off.",
    )


def _mark_constant(ax: Any, grp: pd.DataFrame, x: Any, y: Any, marked: list[bool]) -> None:
    """Cross out the points of ``grp`` some of whose seeds predicted a constant."""
    if "constant" not in grp:
        return
    flag = (grp["constant"] > 0).to_numpy()
    if not flag.any():
        return
    label = None if marked[0] else "constant prediction"
    marked[0] = True
    ax.scatter(
        np.asarray(x)[flag], np.asarray(y)[flag], marker="x", s=70, color="red",
        linewidths=1.5, zorder=4, label=label,
    )  # fmt: skip


def _seed_phrase(n_seeds: pd.Series) -> str:
    """``"one seed (no error bars)"`` or ``"mean ± std over N seeds"`` for a plot or page."""
    lo, hi = int(n_seeds.min()), int(n_seeds.max())
    if hi <= 1:
        return "one seed (no error bars)"
    count = f"{hi}" if lo == hi else f"{lo}-{hi}"
    return f"mean ± std over {count} seeds"


def _plot(
    agg: pd.DataFrame, measure: str, perf: Sequence[str], title: str, stem: Path
) -> list[Path]:
    """Draw ``perf`` against ``measure``, one line per method, each point labelled by strength.

    A single seed is drawn without error bars and said so in the title; a point some of
    whose seeds predicted a constant (:func:`otfair.metrics.is_constant_prediction`) is
    crossed out (a red ``x``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    one_seed = int(agg["n_seeds"].max()) <= 1
    marked: list[bool] = [False]  # the legend names the marker once
    fig, axes = plt.subplots(1, len(perf), figsize=(5.2 * len(perf), 4.2), squeeze=False)
    for ax, p in zip(axes[0], perf, strict=True):
        for label, grp in agg.groupby("label", sort=True):
            grp = grp.sort_values("strength", na_position="first")
            x, y = grp[f"{measure}_mean"], grp[f"{p}_mean"]
            if one_seed:
                ax.plot(x, y, marker="o", markersize=4, linewidth=1.2, label=label)
            else:
                ax.errorbar(
                    x,
                    y,
                    xerr=_clipped_at_zero(x, grp[f"{measure}_std"]),
                    yerr=grp[f"{p}_std"],
                    marker="o",
                    markersize=4,
                    capsize=2,
                    linewidth=1.2,
                    label=label,
                )
            _mark_constant(ax, grp, x, y, marked)
            for xi, yi, strength in zip(x, y, grp["strength"], strict=True):
                if np.isfinite(xi) and np.isfinite(yi) and np.isfinite(strength):
                    ax.annotate(
                        f"{strength:g}",
                        (xi, yi),
                        textcoords="offset points",
                        xytext=(3, 3),
                        fontsize=6,
                        alpha=0.8,
                    )
        x = agg[f"{measure}_mean"].to_numpy()
        y = agg[f"{p}_mean"].to_numpy()
        front = pareto_front(x, y)
        if front.any():
            order = np.argsort(x[front])
            ax.step(
                x[front][order],
                y[front][order],
                where="post",
                color="black",
                linestyle="--",
                linewidth=0.8,
                label="Pareto front",
            )
            ax.scatter(x[front], y[front], s=90, facecolors="none", edgecolors="black", zorder=3)
        ax.set_xlabel(f"{_LABELS.get(measure, measure)} (lower is fairer)")
        ax.set_ylabel(_LABELS.get(p, p))
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="best")
    # two short lines: one line was cut off on single-panel figures
    fig.suptitle(
        f"{title}\n{_seed_phrase(agg['n_seeds'])}; numbers at points are strengths",
        fontsize=10,
    )
    fig.tight_layout()
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    # the same files on a rerun: no date in the SVG, its element ids from a fixed salt
    with plt.rc_context({"svg.hashsalt": "otfair-report"}):
        for path in paths:
            metadata = {"Date": None} if path.suffix == ".svg" else None
            fig.savefig(path, dpi=110, metadata=metadata)
    plt.close(fig)
    return paths
