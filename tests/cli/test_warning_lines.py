"""The command line's warnings: one ``warning:`` line per kind, repeats counted at the end."""

from __future__ import annotations

import io
import warnings

from otfair.estimators import FitQualityWarning
from otfair_lab.cli._warnings import WarningLines, warning_kind


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_each_kind_prints_once_on_one_line_and_repeats_are_counted():
    out = io.StringIO()
    shown = WarningLines(out)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = shown.show
        for strength in (0.01, 0.03, 0.1):
            text = f"ends below the constant:\n at strength={strength}"
            warnings.warn(text, FitQualityWarning, stacklevel=1)
        warnings.warn("features reach 1e+06 in magnitude", UserWarning, stacklevel=1)
    shown.summary()
    lines = _lines(out)
    assert lines[0] == "warning: FitQualityWarning: ends below the constant: at strength=0.01"
    assert lines[1] == "warning: UserWarning: features reach 1e+06 in magnitude"
    assert len(lines) == 3 and lines[2].startswith("note: 2 more FitQualityWarning like")


def test_kinds_differ_by_words_or_category_not_by_numbers():
    a = warning_kind(FitQualityWarning, "accuracy 0.5337 vs 0.7000 at strength=1e-12")
    assert a == warning_kind(FitQualityWarning, "accuracy 0.61 vs 0.7 at strength=3")
    assert a != warning_kind(UserWarning, "accuracy 0.5337 vs 0.7000 at strength=1e-12")
    assert a != warning_kind(FitQualityWarning, "loss 0.5337 vs 0.7000 at strength=1e-12")


def test_no_summary_without_repeats():
    out = io.StringIO()
    shown = WarningLines(out)
    shown.show(UserWarning("once"), UserWarning, "f.py", 1)
    shown.summary()
    assert _lines(out) == ["warning: UserWarning: once"]
