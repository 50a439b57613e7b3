"""docs/extending.md runs as written: its Python blocks, in order, in one namespace.

The page adds a penalty with one class and one registration line, fits it, fits its
fairness path in one stacked run (a ``batchable`` plug-in) and checks that a notion it
cannot serve, and a factory that ignores the notion, are refused; the blocks hold the
assertions.
"""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
FENCE = "`" * 3


def test_extending_page_runs_as_written(capsys, monkeypatch):
    from otfair.penalties import _registry

    # the page registers two names: keep them out of the other tests' name table
    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(FENCE + r"python\n(.*?)" + FENCE, text, flags=re.S)
    assert len(blocks) == 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own doc
    out = capsys.readouterr().out
    assert "notion='eo' is not supported by absgap" in out
    assert "would train demographic parity" in out
    frame = namespace["path"].score_frame(
        namespace["X"], namespace["y"], sensitive_features=namespace["s"]
    )
    assert frame["strength"].tolist() == [0.0, 2.0, 8.0]
