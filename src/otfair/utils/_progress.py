"""A progress bar over training epochs (rich), shown when an estimator is ``verbose``."""

from __future__ import annotations

from typing import Any

#: per epoch: floats, lists for (K,) logs (the engine's epoch logs)
EpochLogs = dict[str, Any]


class EpochProgress:
    """A rich progress bar over epochs (no-op unless ``verbose``)."""

    def __init__(self, verbose: bool, total: int, desc: str) -> None:
        self.bar = None
        if verbose:
            from rich.progress import Progress

            self.bar = Progress(transient=False)
            self.task = self.bar.add_task(desc, total=total)

    def __enter__(self) -> EpochProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def advance(self, logs: EpochLogs) -> None:
        if self.bar is not None:
            shown = {k: v for k, v in logs.items() if k != "time_s" and isinstance(v, float)}
            text = " ".join(f"{k}={v:.4g}" for k, v in shown.items())
            self.bar.update(self.task, advance=1, description=text)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
