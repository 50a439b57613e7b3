"""A sweep's printed estimate is of the whole command (issue 48, item 5).

What was spent before the estimate (checks, pilot fits, a worker's timed start-up) is
added to the estimate of what follows, and the stated range is around the whole.
"""

from __future__ import annotations

import time

from otfair_lab.experiments._plan import SweepPlan


def _plan(**kwargs):
    return SweepPlan(name="s", profile="full", smoke=False, total=4, stored=0, todo=4,
                     workers=1, estimate_s=100.0, basis="pilots", **kwargs)  # fmt: skip


def test_the_estimate_adds_what_was_already_spent():
    plan = _plan(started=time.perf_counter() - 50.0)
    text = plan.describe()
    assert 50.0 <= plan.spent_s() < 50.0 + 60.0  # a loaded machine may pause the test
    whole = plan.spent_s() + 100.0
    assert f"estimated {whole / 60:.1f} min" in text or f"estimated {whole:.0f} s" in text
    assert "already spent on checks, pilots and start-up, included" in text
    assert "1.7 min to go" in text


def test_without_a_start_the_estimate_is_what_follows():
    plan = _plan()
    assert plan.spent_s() == 0.0
    text = plan.describe()
    assert text.endswith("estimated 1.7 min (likely 50 s to 3.3 min; pilots)")


def test_the_load_factor_follows_the_load_average(monkeypatch):
    import os

    import otfair_lab.experiments._plan as plan

    monkeypatch.setattr(plan, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (7.0, 0.0, 0.0))
    factor, words = plan.load_factor()
    assert factor == 4.0 and "x4.0 for the load average 7.0 on 2 cores" in words
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert plan.load_factor() == (1.0, "")  # an idle machine: the timings as they are
