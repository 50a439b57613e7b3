"""Per-dataset paper settings of the registered methods: one table.

Every per-dataset value a builder takes from a paper lives in :data:`PAPER_SETTINGS`,
keyed by paper and dataset name; the sweep configs only choose datasets, methods, grids
and seeds. A dataset a paper does not cover gets the paper's ``"*"`` row.

- ``"accuracy-disparity"`` (App. B and the authors' code): encoder widths (the first
  layer(s) of the regression net are the feature map ``g``), adversary widths, Adadelta
  learning rate, batch size, epochs and WassersteinNet's weight-clipping norm, plus the
  first value of BGL's eps grid (``bgl_eps``, in units of the [0, 1]-scaled target);
- ``"ftm"`` (App. D.1): the batch size (group batch ``m`` for FTM, loss batch for the
  baselines).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER_SETTINGS", "paper_settings"]

_APP_B = ("encoder_hidden", "adversary_hidden", "lr", "batch_size", "epochs", "clip", "bgl_eps")


def _app_b(*values: Any) -> dict[str, Any]:
    return dict(zip(_APP_B, values, strict=True))


PAPER_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "accuracy-disparity": {
        "adult": _app_b((60, 60), (60,), 0.1, 512, 50, 0.005, 0.07),
        "compas": _app_b((60,), (10,), 1.0, 512, 50, 0.05, 0.1),
        "communities_crime": _app_b((50,), (100,), 0.1, 256, 100, 0.002, 0.01),
        "law_school": _app_b((10,), (10,), 0.1, 256, 100, 0.2, 0.01),
        "*": _app_b((60,), (60,), 1.0, 256, 50, 0.05, 0.1),
    },
    "ftm": {
        "adult": {"batch_size": 1024},
        "german": {"batch_size": 200},
        "dutch": {"batch_size": 1024},
        "bank": {"batch_size": 512},
        "*": {"batch_size": 1024},
    },
}


def paper_settings(
    dataset: str | None, paper: str = "accuracy-disparity", *, estimator: Any = None
) -> dict[str, Any]:
    """Return a copy of ``paper``'s settings for ``dataset`` (its ``"*"`` row if unknown).

    With ``estimator``, only the settings that estimator's constructor accepts are
    returned, so that ``cls(**paper_settings(name, estimator=cls))`` always builds
    (``clip`` is WassersteinNet's alone, ``bgl_eps`` is BGL's strength).

    Parameters
    ----------
    dataset : str or None
        Dataset name as used by :func:`otfair.datasets.load_dataset`.
    paper : {"accuracy-disparity", "ftm"}, default="accuracy-disparity"
        Which paper's table.
    estimator : type or str, optional
        An estimator class, or a registered method name (its estimator class): keep
        only its constructor's parameters.

    Returns
    -------
    dict
        For ``"accuracy-disparity"``: ``encoder_hidden``, ``adversary_hidden``, ``lr``,
        ``batch_size``, ``epochs``, ``clip`` and ``bgl_eps``; for ``"ftm"``:
        ``batch_size``.

    Examples
    --------
    >>> paper_settings("law_school")["clip"]
    0.2
    >>> paper_settings("german", paper="ftm")
    {'batch_size': 200}
    >>> "clip" in paper_settings("law_school", estimator="cenet")
    False
    """
    try:
        table = PAPER_SETTINGS[paper]
    except KeyError:
        raise ValueError(
            f"`paper` must be one of {sorted(PAPER_SETTINGS)}; got {paper!r}."
        ) from None
    row = dict(table.get(str(dataset), table["*"]))
    if estimator is None:
        return row
    return {k: v for k, v in row.items() if k in _constructor_params(estimator)}


def _constructor_params(estimator: Any) -> set[str]:
    """Parameter names of the constructor of ``estimator`` (a class or a method name)."""
    import inspect

    if isinstance(estimator, str):
        from otfair_lab.experiments.methods._spec import get_method

        cls = get_method(estimator).estimator
        if cls is None:
            raise ValueError(f"method {estimator!r} declares no estimator class.")
        estimator = cls
    if not isinstance(estimator, type):
        estimator = type(estimator)
    return set(inspect.signature(estimator.__init__).parameters) - {"self"}
