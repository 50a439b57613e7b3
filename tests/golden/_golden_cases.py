"""Cases of the golden ``otfair fit --json`` file and the function that (re)records it.

Regenerate (only when a behaviour change is intended, and say why in the commit)::

    cd <worktree> && export PYTHONPATH=$PWD/src OTFAIR_DATA_DIR=/work/shared/datasets
    python tests/golden/_golden_cases.py            # rewrites tests/golden/fit_golden.json
    python tests/golden/_golden_cases.py german/ftm # re-records only those cases

Each case is one ``otfair fit`` command line (run in-process through the CLI app with
``--json``): every registered classification method on German (seed 0, a few epochs),
the classification methods that support EO once more with ``--notion eo``, and every
regression method on Law School (seed 0, 1500 training rows, a few epochs). Only the
metric panel (``CLASSIFICATION_KEYS`` / ``REGRESSION_KEYS`` and, for AdapFair, its
``baseline`` panel) is stored and compared, so CLI-format changes (new fields, timings,
the reported default strength) do not break the comparison.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GOLDEN_PATH = Path(__file__).with_name("fit_golden.json")

#: Short, fixed budgets so that the whole golden test stays well under a minute.
#: (AdapFair's epochs are flow epochs after a pretrained classifier: 3 already move it.)
_CLASSIF_EPOCHS = 30
_ADAPFAIR_EPOCHS = 3
_REGRESSION_EPOCHS = 20
_REGRESSION_ROWS = 1500

_CLASSIFICATION = (
    "adapfair",
    "adapfair-blind",
    "adv",
    "barycenter",
    "cfair",
    "fairtorch-reduction",
    "fair-nf",
    "ftm",
    "fair-pca",
    "ftm-joint",
    "gapreg",
    "laftr",
    "norm",
    "ot-repair",
    "otf",
    "reduction",
    "sipm-lfr",
    "unfair",
    "unfair-mlp",
    "wb-postprocess",
)
#: Methods re-run with ``--notion eo`` (those whose registry entry lists eo).
_EO = ("adv", "norm", "otf", "reduction", "adapfair", "laftr")
#: Methods that need a small finite input space (German's has ~10^10 cells): on Adult.
_CATEGORICAL_ONLY = {"fair-nf-discrete": "adult"}
_REGRESSION = ("bgl", "cenet", "cod", "cod-rff", "unfair-reg", "wassersteinnet", "wb-regression")


def cases() -> list[tuple[str, list[str]]]:
    """``(case_id, argv)`` for every golden run (argv after ``otfair``)."""
    from otfair_lab.experiments._names import epochs_problem

    def epochs_flag(method: str, epochs: int) -> list[str]:  # `fit` refuses it where unused
        return [] if epochs_problem(method) else ["--epochs", str(epochs)]

    out: list[tuple[str, list[str]]] = []
    for method in _CLASSIFICATION:
        base = ["fit", "--dataset", "german", "--method", method, "--seed", "0"]
        epochs = _ADAPFAIR_EPOCHS if method.startswith("adapfair") else _CLASSIF_EPOCHS
        base += [*epochs_flag(method, epochs), "--json"]
        out.append((f"german/{method}/dp", base))
        if method in _EO:
            out.append((f"german/{method}/eo", [*base, "--notion", "eo"]))
        if method.startswith("ftm"):  # lambda=1 (default) is nearly constant at 30 epochs
            out.append((f"german/{method}/dp/0.1", [*base, "--strength", "0.1"]))
        if method == "adapfair":
            out.append((f"german/{method}/eopp", [*base, "--notion", "eopp"]))
    for method, dataset in _CATEGORICAL_ONLY.items():
        argv = ["fit", "--dataset", dataset, "--method", method, "--seed", "0"]
        argv += ["--epochs", "10", "--max-train-rows", "3000", "--json"]
        out.append((f"{dataset}/{method}/dp", argv))
    for method in _REGRESSION:
        argv = ["fit", "--dataset", "law_school", "--method", method, "--seed", "0"]
        argv += [*epochs_flag(method, _REGRESSION_EPOCHS), "--json"]
        argv += ["--max-train-rows", str(_REGRESSION_ROWS)]
        out.append((f"law_school/{method}", argv))
    return out


def panel(result: dict[str, Any]) -> dict[str, Any]:
    """The metric panel of one ``fit --json`` result (what the golden file compares)."""
    from otfair.metrics import CLASSIFICATION_KEYS, REGRESSION_KEYS

    keys = CLASSIFICATION_KEYS if result["task"] == "classification" else REGRESSION_KEYS
    out: dict[str, Any] = {k: result[k] for k in keys}
    if isinstance(result.get("baseline"), dict):
        out["baseline"] = {k: result["baseline"][k] for k in keys if k in result["baseline"]}
    return out


def run_case(argv: list[str]) -> dict[str, Any]:
    """Run ``otfair <argv>`` in-process and return its metric panel."""
    from typer.testing import CliRunner

    from otfair_lab.cli import app

    res = CliRunner().invoke(app, argv)
    if res.exit_code != 0:
        raise RuntimeError(f"otfair {' '.join(argv)} failed:\n{res.output}")
    return panel(json.loads(res.stdout))


def record(path: Path = GOLDEN_PATH, only: str | None = None) -> dict[str, Any]:
    """Run every case (or those whose id starts with ``only``) and write the golden file.

    With ``only``, the other cases keep their recorded panels (re-record only what an
    intended behaviour change moved, and say why in the test module's docstring).
    """
    data = json.loads(path.read_text()) if only and path.exists() else {}
    for cid, argv in cases():
        if not only or cid.startswith(only):
            data[cid] = {"argv": argv, "panel": run_case(argv)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


if __name__ == "__main__":
    # python tests/golden/_golden_cases.py [CASE_PREFIX]   e.g. german/ftm
    record(only=sys.argv[1] if len(sys.argv) > 1 else None)
    print(f"wrote {GOLDEN_PATH}")
