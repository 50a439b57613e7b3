"""Shared by the benchmark scripts: their command line and their synthetic data."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import torch


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
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
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
