"""docs/adapfair.md's API example runs and what the page says of it holds.

The page claims, without quoting numbers: with ``strength=0.1`` the pipeline's DP gap on the
drifted test rows is below the frozen classifier's; with the default ``strength=0.5`` it ends
above it. The block is run as written (its own data, seeds and settings), then refitted
with the default ``strength``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapfair.md"
_PYTHON = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.M | re.S)


def api_example() -> str:
    """The first Python block of the page's API section."""
    section = PAGE.read_text(encoding="utf-8").split("\n## API\n", 1)[1].split("\n## ", 1)[0]
    blocks = _PYTHON.findall(section)
    assert blocks, "docs/adapfair.md's API section has no python block"
    return blocks[0]


def test_the_example_is_self_contained_and_uses_the_strength_the_page_names():
    code = api_example()
    assert "strength=0.1" in code and "make_synthetic" in code
    text = PAGE.read_text(encoding="utf-8")
    assert "With `strength=0.1` the pipeline's DP gap" in text
    assert "With the default `strength=0.5`" in text


def test_the_default_strength_is_the_one_the_page_names():
    from otfair.estimators import AdapFairPreprocessor

    assert AdapFairPreprocessor(None).get_params()["strength"] == 0.5


@pytest.mark.slow
def test_api_example_runs_and_strength_01_lowers_the_gap_05_does_not(tmp_path, monkeypatch):
    from otfair.metrics import demographic_parity_gap

    monkeypatch.chdir(tmp_path)  # nothing the block writes lands in the checkout
    namespace: dict = {"__name__": "__adapfair_md__"}
    exec(compile(api_example(), "docs/adapfair.md API example", "exec"), namespace)
    pre, target = namespace["pre"], namespace["target"]
    assert pre.strength == 0.1
    X_test, y_test, s_test = target.X_test, target.y_test, target.s_test

    def gap(proba):
        return demographic_parity_gap(y_test, proba, sensitive_features=s_test)

    frozen = gap(namespace["frozen"])
    repaired = gap(namespace["repaired"])
    assert repaired < frozen, (repaired, frozen)

    default = pre.set_params(strength=0.5).fit(
        namespace["X"], namespace["y"], sensitive_features=namespace["s"]
    )
    at_default = gap(default.predict_proba(X_test, sensitive_features=s_test)[:, 1])
    assert at_default > frozen, (at_default, frozen)
    # the frozen classifier is the same object throughout: its scores did not move
    assert gap(default.classifier_proba(X_test)) == frozen
