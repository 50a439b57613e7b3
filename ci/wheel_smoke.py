"""Smoke test of an installed otfair wheel, run by ``.ci/run`` from outside the checkout.

The wheel (not an editable install) must import, reach its subpackages lazily, find its
package data (dataset registry, method names, demo configs, the papers' values), train a
useful model on its synthetic data and run the README's quick start ``otfair demo``.

Usage: ``python ci/wheel_smoke.py OUT_DIR`` with the wheel's environment active.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import otfair

out = Path(sys.argv[1]).resolve()
here = Path(otfair.__file__).resolve()
assert "site-packages" in here.parts, f"otfair imported from {here}, not from the wheel"
assert "torch" not in sys.modules, "import otfair imported torch"
assert not any(m.startswith("otfair_lab") for m in sys.modules), "otfair imported otfair_lab"

# lazy subpackages, a fit on the embedded synthetic data, the report
data = otfair.datasets.make_synthetic(2000, random_state=0)
split = data.split(test_size=0.3, random_state=0)
clf = otfair.estimators.FairClassifier(
    "otf", strength=0.2, batch_size=256, random_state=0
)  # L-BFGS to tol: 31 iterations
clf.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
proba = clf.predict_proba(split.X_test)[:, 1]
report = otfair.metrics.fairness_report(split.y_test, proba, sensitive_features=split.s_test)
assert report.summary["auc"] > 0.7, report.summary
print(f"FairClassifier('otf'): AUC {report.summary['auc']:.3f}, DP {report.summary['dp_gap']:.3f}")

# package data
assert "adult" in otfair.datasets.list_datasets()
import otfair_lab  # noqa: E402 - after the checks above
from otfair_lab.experiments.methods import list_methods  # noqa: E402

assert len(otfair_lab.reproduction.load_paper_values("otf")) > 0

assert "otf" in list_methods()

# the README quick start: `otfair demo --out DIR` (the console script of the wheel)
script = Path(sys.executable).with_name("otfair")
subprocess.run([str(script), "demo", "--out", str(out)], check=True)
index = out / "report" / "index.md"
assert index.is_file(), f"otfair demo wrote no {index}"
print(f"otfair demo: {index} ({index.stat().st_size} bytes)")
