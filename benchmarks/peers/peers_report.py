"""Peers page, the report: seed means, matched-DP selection, markdown tables, the plot."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from peers_plan import LEVELS, LIBRARY, _fmt, read_rows


# --------------------------------------------------------------------------- report
def aggregate(rows: list[dict]) -> dict[tuple, dict]:
    """Mean (and std over seeds) per (dataset, model, method, strength)."""
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        cells.setdefault((r["dataset"], r["model"], r["method"], r["strength"]), []).append(r)
    agg = {}
    for key, rs in cells.items():
        agg[key] = {"n_seeds": len(rs)}
        for k in ("accuracy", "auc", "dp_gap", "fit_cpu_s"):
            vals = np.array([r[k] for r in rs])
            agg[key][k] = float(vals.mean())
            agg[key][k + "_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
    return agg


def matched(agg: dict[tuple, dict], levels: Iterable[float] = LEVELS) -> list[dict]:
    """Per (dataset, model, method, level): the strength with the largest mean DP <= level.

    Methods that never reach the level get a row with ``strength`` NaN and the smallest
    mean DP gap they reached in ``min_dp``.
    """
    out = []
    groups = sorted({k[:3] for k in agg})
    for ds, model, method in groups:
        cand = {k[3]: v for k, v in agg.items() if k[:3] == (ds, model, method)}
        for level in levels:
            ok = {st: v for st, v in cand.items() if v["dp_gap"] <= level + 1e-12}
            row = {"dataset": ds, "model": model, "method": method, "level": level}
            if ok:
                st = max(ok, key=lambda t: (ok[t]["dp_gap"], ok[t]["accuracy"]))
                row.update(strength=st, **ok[st])
            else:
                row.update(strength=float("nan"),
                           min_dp=min(v["dp_gap"] for v in cand.values()))  # fmt: skip
            out.append(row)
    return out


def markdown(rows: list[dict], agg: dict[tuple, dict] | None = None) -> str:
    """Markdown tables of the matched rows, one per (dataset, model, level).

    Methods are sorted by accuracy; the unfair model of the block (from ``agg``) is
    quoted in the block's title instead of a row.
    """
    parts = []
    for ds, model, level in sorted({(r["dataset"], r["model"], r["level"]) for r in rows},
                                   key=lambda t: (t[0], t[1], -t[2])):  # fmt: skip
        block = sorted(
            (r for r in rows if (r["dataset"], r["model"], r["level"]) == (ds, model, level)
             and r["method"] != "unfair"),
            key=lambda r: -r.get("accuracy", -1.0),
        )  # fmt: skip
        ref = (agg or {}).get((ds, model, "unfair", 0.0))
        title = f"\n**{ds}, {model}, DP gap <= {level}**"
        if ref:
            title += (
                f" (unfair model: accuracy {ref['accuracy']:.3f}, AUC {ref['auc']:.3f}, "
                f"DP gap {ref['dp_gap']:.3f}, {ref['n_seeds']} seed(s))"
            )
        parts.append(title + "\n")
        parts.append(
            "| method | library | strength | seeds | accuracy | AUC | DP gap | fit CPU s |"
        )
        parts.append("|---|---|---|---|---|---|---|---|")
        for r in block:
            lib = LIBRARY.get(r["method"], "")
            if math.isnan(r["strength"]):
                parts.append(
                    f"| {r['method']} | {lib} | not reached (min DP {r['min_dp']:.3f}) | | | | | |"
                )
                continue
            acc, auc = f"{r['accuracy']:.3f}", f"{r['auc']:.3f}"
            if r["n_seeds"] > 1:
                acc += f" ± {r['accuracy_std']:.3f}"
                auc += f" ± {r['auc_std']:.3f}"
            parts.append(
                f"| {r['method']} | {lib} | {r['strength']:g} | {r['n_seeds']} "
                f"| {acc} | {auc} | {r['dp_gap']:.3f} | {r['fit_cpu_s']:.1f} |"
            )
    return "\n".join(parts) + "\n"


def plot(agg: dict[tuple, dict], path: Path) -> None:
    """Accuracy vs test DP gap, one panel per (dataset, model), one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({k[:2] for k in agg})
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    methods = sorted({k[2] for k in agg})
    cmap = plt.get_cmap("tab20")
    for ax, (ds, model) in zip(axes[0], panels, strict=True):
        for i, m in enumerate(methods):
            pts = sorted((v["dp_gap"], v["accuracy"]) for k, v in agg.items()
                         if k[:3] == (ds, model, m))  # fmt: skip
            if not pts:
                continue
            style = "-o" if LIBRARY.get(m) == "otfair" else "--s"
            ax.plot(*zip(*pts, strict=True), style, ms=4, color=cmap(i), label=m)
        for level in LEVELS:
            ax.axvline(level, color="grey", lw=0.8, ls=":")
        ax.set_title(f"{ds} ({model})")
        ax.set_xlabel("test DP gap")
        ax.set_ylabel("test accuracy")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(out: Path) -> str:
    """Write ``matched.csv`` and ``tradeoff.png`` beside ``out``; return the markdown."""
    agg = aggregate(read_rows(out))
    rows = matched(agg)
    keys = ("dataset", "model", "method", "level", "strength", "n_seeds", "accuracy",
            "accuracy_std", "auc", "auc_std", "dp_gap", "fit_cpu_s", "min_dp")  # fmt: skip
    with (out.parent / "matched.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(r[k]) if k in r else "" for k in keys})
    plot(agg, out.parent / "tradeoff.png")
    return markdown(rows, agg)
