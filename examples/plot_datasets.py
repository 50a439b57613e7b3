"""
The real datasets and their groups
==================================

otfair loads the eight real datasets of its four papers with one call,
:func:`otfair.datasets.load_dataset`, each with its sensitive attribute, preprocessing
and a description (:func:`otfair.datasets.dataset_summary` returns the same
statistics as a dictionary). The figure shows, for each
dataset, the size of each sensitive group and its base rate (the share of positive
labels; the mean target for a regression dataset): the gaps a fair model has to deal
with. The files are read from ``OTFAIR_DATA_DIR`` (this site's build points it at the
project's shared copy); loading all eight takes a few seconds.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from otfair.datasets import load_dataset

names = [
    "adult",
    "compas",
    "german",
    "bank",
    "dutch",
    "diabetes",
    "law_school",
    "communities_crime",
]
rows = []
for name in names:
    data = load_dataset(name)
    attribute = data.sensitive.columns[0]  # the loader's default sensitive attribute
    s = data.sensitive[attribute].to_numpy()
    y = data.target
    groups = [(g, int((s == g).sum()), float(y[s == g].mean())) for g in np.unique(s)]
    rows.append((name, attribute, data.task, groups))
    print(f"{name:18s} {len(y):7d} rows, sensitive {attribute!r}, {data.task}")

# %%
fig, axes = plt.subplots(2, 4, figsize=(13, 5.5))
for ax, (name, attribute, task, groups) in zip(axes.ravel(), rows, strict=True):
    labels = [f"{attribute}={g:g}\nn={n}" for g, n, _ in groups]
    ax.bar(labels, [rate for *_, rate in groups], color=["C0", "C1"][: len(groups)])
    ax.set_title(name if task == "classification" else f"{name} (mean target)")
    ax.tick_params(labelsize=8)
for ax in axes[:, 0]:
    ax.set_ylabel("base rate per group")
fig.tight_layout()
plt.show()
