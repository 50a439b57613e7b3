"""
A sweep and its HTML report
===========================

``otfair sweep CONFIG.toml`` (and :func:`otfair_lab.experiments.run_sweep` in Python) runs
every method x strength x seed of a config into a resumable result store, then
:func:`otfair_lab.experiments.make_report` writes the report: trade-off plots, Markdown
tables and an ``index.html``. Here a small sweep built in Python (synthetic data, 1,000
training rows, 10 epochs, 2 seeds, 12 runs: about 20 seconds on 2 CPU cores); the
figure is the report's own trade-off plot.
"""

# %%
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from otfair_lab.experiments import make_report, parse_spec, run_sweep

spec = parse_spec(
    {
        "name": "gallery",
        "seeds": 2,
        "epochs": 10,
        "max_train_rows": 1000,
        "datasets": [{"name": "synthetic"}],
        "methods": [
            {"name": "unfair", "options": {"lr": 0.01, "batch_size": 250}},
            {
                "name": "gapreg",
                "strengths": [0.5, 5.0],
                "options": {"lr": 0.01, "batch_size": 250},
            },
            {
                "name": "otf",
                "strengths": [0.01, 0.1],
                "notions": ["dp"],
                "options": {"lr": 0.01, "batch_size": 250},
            },
        ],
        "report": {"performance": ["accuracy"], "fairness": ["dp_gap"]},
    }
)
out = Path(tempfile.mkdtemp(prefix="otfair-gallery-"))
summary = run_sweep(spec, out, progress=False)
index = make_report(out)
print(summary)
print(sorted(p.name for p in index.parent.iterdir()))

# %%
# The report's Markdown starts with what was run; ``index.html`` renders the same text.
print("\n".join(index.read_text().splitlines()[:12]))

# %%
# Its first trade-off plot, as written to the report folder:
png = sorted(index.parent.rglob("*.png"))[0]
fig, ax = plt.subplots(figsize=(7, 5))
ax.imshow(mpimg.imread(png))
ax.set_axis_off()
ax.set_title(f"report figure: {png.name}")
fig.tight_layout()
plt.show()
