"""docs/extending.md runs as written: its Python blocks, in order, in one namespace.

The page adds a penalty with one module (its torch penalty and its penalty object) and
one registration line, fits it for equalized odds, fits its fairness path in one stacked
run (a ``batchable`` plug-in) and checks that a notion it cannot serve, and a factory
that ignores the notion, are refused; the blocks hold the assertions.
"""

import re
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
FENCE = "`" * 3


def test_extending_page_runs_as_written(capsys, monkeypatch):
    from otfair.penalties import _base, _registry, list_penalties

    # the page registers two names: keep them out of the other tests' name tables
    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    monkeypatch.setattr(_base, "PENALTY_OBJECTS", dict(_base.PENALTY_OBJECTS))
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(FENCE + r"python\n(.*?)" + FENCE, text, flags=re.S)
    assert len(blocks) == 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own doc
    out = capsys.readouterr().out
    assert "notion='eopp' is not supported by this penalty (DP, EO only)" in out
    assert "would train demographic parity" in out
    frame = namespace["path"].score_frame(
        namespace["X"], namespace["y"], sensitive_features=namespace["s"]
    )
    assert frame["strength"].tolist() == [0.0, 2.0, 8.0]
    assert {"absgap", "absgap-careless"} <= set(list_penalties())
    # the registered object is what the name resolves to; its penalty is the page's formula
    obj = _base.as_penalty_object("absgap")
    assert isinstance(obj, namespace["AbsGap"])
    h = torch.tensor([0.2, 0.4, 0.9, 0.7], dtype=torch.float64)
    groups, labels = torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1])
    eo = obj.build("eo")(h, groups, labels)  # |0.2 - 0.9| + |0.4 - 0.7|, by hand
    assert float(eo) == pytest.approx(0.7 + 0.3)
