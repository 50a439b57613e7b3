"""
OTF trade-off curve against Norm
================================

How much accuracy does demographic parity cost, and does the optimal-transport penalty
(OTF, Buyl & De Bie, NeurIPS 2022, §4) buy it more cheaply than the plain linear
penalty ``Norm`` (the norm of the constraint violation, the paper's baseline)?

Both penalties are fitted as a **whole curve in one training run**
(:func:`~otfair.estimators.fairness_path`: the models share batches and seed) on a
small synthetic dataset: 3,000 rows, a logistic model, 40 epochs, so the script takes
about ten seconds on 2 CPU cores.
"""

# %%
import matplotlib.pyplot as plt

from otfair.datasets import make_synthetic
from otfair.estimators import FairClassifier, fairness_path
from otfair.metrics import pdp_violation, roc_auc
from otfair.penalties import OTF, Norm

split = make_synthetic(n_samples=3000, random_state=0).split(random_state=0)
strengths = [0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]

# %%
# One path per penalty: ``path.estimators_[k]`` is the model fitted at ``strengths[k]``.
fig, ax = plt.subplots(figsize=(6, 4))
for penalty, marker in [(OTF(eps=1e-3), "o"), (Norm(), "s")]:
    template = FairClassifier(penalty, epochs=40, batch_size=500, random_state=0)
    path = fairness_path(
        template,
        split.X_train,
        split.y_train,
        sensitive_features=split.s_train,
        strengths=strengths,
    )
    auc, violation = [], []
    for model in path.estimators_:
        proba = model.predict_proba(split.X_test)[:, 1]
        auc.append(roc_auc(split.y_test, proba))
        violation.append(pdp_violation(split.y_test, proba, sensitive_features=split.s_test))
    name = type(penalty).__name__
    ax.plot(violation, auc, marker=marker, label=name)

ax.set_xscale("log")
ax.set_xlabel("PDP violation (test, log scale; left is fairer)")
ax.set_ylabel("ROC AUC (test)")
ax.set_title("Trade-off curves: OTF vs Norm (synthetic data)")
ax.legend()
fig.tight_layout()
plt.show()
