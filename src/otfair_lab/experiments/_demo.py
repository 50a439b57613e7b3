"""The packaged demo sweep behind ``otfair demo``."""

from __future__ import annotations

from dataclasses import replace
from importlib.resources import files

from otfair_lab.experiments._spec import DatasetEntry, SweepSpec, load_spec


def packaged_config(name: str) -> SweepSpec:
    """Load the sweep spec ``name`` shipped in ``otfair_lab/experiments/configs``."""
    resource = files("otfair_lab.experiments") / "configs" / f"{name}.toml"
    return load_spec(str(resource))


def _grid_phrase(spec: SweepSpec) -> str:
    seeds = len(spec.seeds)
    test = f"{round(spec.test_size * 100)}% test split"
    if spec.max_train_rows:  # the training part is subsampled: not "80/20"
        return (
            f"{seeds} seed{'s' if seeds != 1 else ''}, {test}, training on at most "
            f"{spec.max_train_rows:,} rows of the rest"
        )
    split = f"{round((1 - spec.test_size) * 100)}/{round(spec.test_size * 100)}"
    return f"{seeds} seed{'s' if seeds != 1 else ''}, {split} splits"


def demo_spec(dataset: str | None = None) -> SweepSpec:
    """Return the demo sweep, optionally on another dataset.

    ``dataset=None`` uses the embedded synthetic two-group classification data. Another
    classification dataset keeps the demo's methods and training settings (small batches,
    20 epochs on up to 1,500 rows, enough for the trade-off to show). A regression dataset
    (by its default options) switches to the accuracy-parity demo (unfair vs
    WassersteinNet and CENet) trained with that dataset's settings from the
    accuracy-disparity paper (App. B,
    :func:`otfair_lab.experiments.methods.paper_settings`: widths, Adadelta learning
    rate, batch size and epochs), since a few epochs at a generic
    learning rate leave every method with a negative R^2. The description names the
    dataset actually used.

    Raises
    ------
    otfair.datasets.DataFileError
        If the dataset's file is missing and cannot be downloaded.
    """
    spec = packaged_config("demo")
    if dataset is None:
        return spec
    from otfair.datasets import load_dataset
    from otfair_lab.experiments.methods import paper_settings

    task = load_dataset(dataset).task
    if task == "regression":
        spec = replace(packaged_config("demo_regression"), epochs=None)
        settings = paper_settings(dataset)
        source = (
            "the accuracy-disparity paper's settings for this dataset (App. B"
            if settings != paper_settings(None)
            else "generic settings (the accuracy-disparity paper does not cover this dataset"
        )
        what = (
            "the unfair regressor against WassersteinNet and CENet (accuracy parity), trained "
            f"with {source}: widths, learning rate, batch size, {settings['epochs']} epochs)"
        )
    else:
        what = (
            "OTF against the unfair logistic regression, GapReg and FTM against the unfair "
            f"MLP, {spec.epochs or 'default'} epochs"
        )
    description = f"Quick demo on the `{dataset}` dataset: {what}; {_grid_phrase(spec)}."
    return replace(
        spec, datasets=(DatasetEntry(name=dataset, label=dataset),), description=description
    )
