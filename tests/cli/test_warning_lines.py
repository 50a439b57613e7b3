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


def test_the_summary_tells_two_long_kinds_apart_by_their_end():
    out = io.StringIO()
    shown = WarningLines(out)
    start = "FairClassifier ends below the best constant predictor (accuracy 0.5 vs 0.7): "
    for cause in ("the penalty may outweigh the labels", "the model is under-trained"):
        for accuracy in ("0.51", "0.52"):
            text = start.replace("0.5 ", accuracy + " ") + cause + " (a fix in words)."
            shown.show(UserWarning(text), UserWarning, "f.py", 1)
    shown.summary()
    notes = [line for line in _lines(out) if line.startswith("note:")]
    assert len(notes) == 2 and notes[0] != notes[1]
    assert "outweigh" in notes[0] and "under-trained" in notes[1]


def test_no_summary_without_repeats():
    out = io.StringIO()
    shown = WarningLines(out)
    shown.show(UserWarning("once"), UserWarning, "f.py", 1)
    shown.summary()
    assert _lines(out) == ["warning: UserWarning: once"]
