"""Helpers of the experiment tests: a small sweep spec over the dummy methods."""

from __future__ import annotations

from pathlib import Path

PLUGIN = "_exp_dummy_methods"


def write_spec(
    path: Path,
    body: str = "",
    *,
    seeds: int = 2,
    sleep: float = 0.0,
    options: str = "",
    name: str = "test",
) -> Path:
    """A sweep of dummy-lr (3 strengths) and dummy-raise on the synthetic data.

    ``options`` adds entries to dummy-lr's options table (``'cold_start = 1.0'``);
    ``body`` is appended after the ``quick`` profile (keys without a table header extend it).
    """
    text = f"""
name = "{name}"
seeds = {seeds}
max_train_rows = 400
plugins = ["{PLUGIN}"]

[[datasets]]
name = "synthetic"

[[methods]]
name = "dummy-lr"
strengths = [0.01, 0.1, 1.0]
options = {{ sleep = {sleep}{", " + options if options else ""} }}

[[methods]]
name = "dummy-raise"

[profiles.quick]
seeds = [0]
max_strengths = 2
{body}
"""
    path.write_text(text)
    return path
