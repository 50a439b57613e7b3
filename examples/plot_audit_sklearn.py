"""
Auditing any scikit-learn model with ``fairness_report``
========================================================

:func:`otfair.metrics.fairness_report` needs only labels, scores and the sensitive
column, so it audits any model: here three scikit-learn classifiers on the real German
credit data (1,000 rows; a few seconds on 2 CPU cores). The report holds one panel of
group measures (DP gap, equalized-odds gaps, the distributional gaps of the FTM and
OTF papers) and a table per group; the figure compares the models' selection rates
and true-positive rates per group.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from otfair.datasets import load_dataset
from otfair.metrics import fairness_report

split = load_dataset("german").split(random_state=0)
models = {
    "logistic": LogisticRegression(max_iter=1000),
    "random forest": RandomForestClassifier(n_estimators=100, random_state=0),
    "gradient boosting": HistGradientBoostingClassifier(random_state=0),
}

reports = {}
for name, model in models.items():
    model.fit(split.X_train, split.y_train)
    score = model.predict_proba(split.X_test)[:, 1]
    reports[name] = fairness_report(split.y_test, score, sensitive_features=split.s_test)

# %%
# The summary panel, one row per model:
import pandas as pd  # noqa: E402

panel = pd.DataFrame({n: r.summary for n, r in reports.items()}).T
print(panel[["accuracy", "auc", "dp_gap", "eo_gap", "wdp"]].round(3))

# %%
# Per group (German: ``sex``, 0 = female, 1 = male):
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
width = 0.25
for k, (name, report) in enumerate(reports.items()):
    table = report.by_group
    x = np.arange(len(table)) + k * width
    axes[0].bar(x, table["selection_rate"], width, label=name)
    axes[1].bar(x, table["tpr"], width, label=name)
for ax, title in zip(axes, ["selection rate", "true-positive rate"], strict=True):
    ax.set_xticks(np.arange(len(table)) + width, [f"sex = {g}" for g in table.index])
    ax.set_title(f"{title} per group (test)")
axes[0].legend(loc="lower left")
fig.tight_layout()
plt.show()
