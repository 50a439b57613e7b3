"""Shared by the benchmark scripts: their command line and their synthetic data."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import torch


class ArgumentParser(argparse.ArgumentParser):
    """``argparse`` with otfair's user-error convention: one ``error:`` line, exit code 2.

    argparse prints its usage line before the message; ``otfair bench NAME --bogus`` (which
    passes its arguments through to the script) should answer as every other otfair
    command does, with the message and where to find the options.
    """

    def error(self, message: str) -> NoReturn:
        """Print ``error: MESSAGE (see PROG --help)`` to stderr and exit with code 2."""
        sys.stderr.write(f"error: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)


def synthetic(n: int, d: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Adult-like synthetic data: ``X`` (n, d), labels ``y`` and a binary group ``s``.

    A third of the rows are in group 1, which shifts the first feature; the label is a
    noisy threshold of that feature.
    """
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    s = (torch.rand(n, generator=g) < 0.33).long()
    X[:, 0] += s
    y = ((X[:, 0] + torch.randn(n, generator=g)) > 0.5).float()
    return X, y, s


def bench_main(
    doc: str,
    run: Callable[..., dict],
    format_rows: Callable[[dict], str],
    argv: list[str] | None = None,
    quick_help: str = "smaller sizes, fewer repeats",
) -> None:
    """Parse ``--quick`` / ``--json``, call ``run(quick=...)`` and print the result."""
    parser = ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    print(json.dumps(result, indent=2, default=float) if args.json else format_rows(result))


def cpu_seconds(fn: Callable[[], object]) -> float:
    """CPU seconds of this process spent in ``fn()`` (``time.process_time``)."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of a markdown table with ``header`` and the already formatted ``rows``."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def load_split(name: str, max_rows: int) -> tuple[tuple, tuple]:
    """Return ``(X, y, s)`` of dataset ``name``'s training rows and of its test rows.

    The loader's stratified 80/20 split (``random_state=0``); the training rows
    subsampled to ``max_rows`` with seed 0 (the test rows all kept).
    """
    import numpy as np

    from otfair.datasets import load_dataset

    split = load_dataset(name).split(random_state=0)
    X, y, s = split.X_train, np.asarray(split.y_train), np.asarray(split.s_train)
    if len(y) > max_rows:
        keep = np.sort(np.random.default_rng(0).choice(len(y), max_rows, replace=False))
        X, y, s = X[keep], y[keep], s[keep]
    return (X, y, s), (split.X_test, np.asarray(split.y_test), np.asarray(split.s_test))


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    """Write ``rows`` under ``columns`` (floats to 4 decimals, ``cpu_s`` to 1; missing: empty)."""

    def cell(key: str, value: Any) -> Any:
        if isinstance(value, float):
            return f"{value:.1f}" if key == "cpu_s" else f"{value:.4f}"
        return value

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: cell(k, r.get(k, "")) for k in columns})


def measurement_main(
    prog: str,
    doc: str,
    prefix: str,
    default_rows: int,
    measure_all: Callable[[int, Callable[[Any], None]], None],
    write_rows: Callable[[Path, list[dict]], None],
    report: Callable[[list[dict], str], str],
) -> None:
    """Run the command line of a measurement script writing ``PREFIX.csv`` and ``.md``.

    ``--max-train-rows`` (default ``default_rows``, at least 100), ``--out PREFIX`` and
    ``--report-only`` (the report again from the CSV, keeping its "Last command").
    Otherwise ``measure_all(max_rows, add)`` runs at one torch and one BLAS thread and
    calls ``add(row)`` for each row (or ``add`` of several); the CSV is rewritten after
    every call, so an interrupted run keeps what it measured. The report is generated
    from the CSV alone.
    """
    parser = ArgumentParser(prog=prog, description=doc)
    parser.add_argument("--max-train-rows", type=int, default=default_rows)
    parser.add_argument("--report-only", action="store_true", help="only rewrite the report")
    parser.add_argument("--out", default=prefix, help="PREFIX of PREFIX.csv and PREFIX.md")
    args = parser.parse_args()
    if args.max_train_rows < 100:
        parser.error("--max-train-rows must be at least 100")
    csv_path, md_path = Path(args.out + ".csv"), Path(args.out + ".md")
    command = f"python {prog} " + " ".join(sys.argv[1:])
    if args.report_only:
        if not csv_path.exists():
            parser.error(f"{csv_path} does not exist: run without --report-only first")
        page = md_path.read_text(encoding="utf-8") if md_path.exists() else ""
        if "Last command: `" in page:
            command = page.split("Last command: `", 1)[1].split("`", 1)[0]
    else:
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(1)
        rows: list[dict] = []

        def add(new: dict | list[dict]) -> None:
            rows.extend(new if isinstance(new, list) else [new])
            csv_path.parent.mkdir(parents=True, exist_ok=True)
            write_rows(csv_path, rows)

        with threadpool_limits(limits=1):
            measure_all(args.max_train_rows, add)
    with csv_path.open(newline="", encoding="utf-8") as f:
        stored = list(csv.DictReader(f))
    md_path.write_text(report(stored, command.strip()) + "\n", encoding="utf-8")
    print(f"wrote {md_path}")


def fit_at(est, X, y, strength, **fit):
    """Fit ``est`` at one ``strength``, or its whole path when ``strength`` is a list.

    A list goes through :func:`otfair.estimators.fairness_path` (one stacked run for the
    estimators that support it).
    """
    from otfair.estimators import fairness_path

    if isinstance(strength, (list, tuple)):
        return fairness_path(est, X, y, strengths=list(strength), **fit)
    return est.set_params(strength=strength).fit(X, y, **fit)
