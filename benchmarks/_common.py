"""Shared by the benchmark scripts: their command line and their synthetic data."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import NoReturn

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


def fit_at(est, X, y, strength, **fit):
    """Fit ``est`` at one ``strength``, or its whole path when ``strength`` is a list.

    A list goes through :func:`otfair.estimators.fairness_path` (one stacked run for the
    estimators that support it).
    """
    from otfair.estimators import fairness_path

    if isinstance(strength, (list, tuple)):
        return fairness_path(est, X, y, strengths=list(strength), **fit)
    return est.set_params(strength=strength).fit(X, y, **fit)
