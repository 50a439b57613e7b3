"""``otfair audit``: the fairness panel of predictions stored in a CSV file.

The CSV holds one row per individual with the true label, the model's score and one or
more sensitive columns, as written by any model. The command prints
:func:`otfair.metrics.fairness_report` as tables, or as JSON whose top-level keys are the
report's stable summary keys plus ``"by_group"`` (and ``"accuracy_disparity"`` for
regression): :meth:`otfair.metrics.FairnessReport.to_dict`. The command only reads and
checks the CSV columns; every measure comes from :func:`otfair.metrics.fairness_report`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from otfair_lab.cli._common import echo_json, fail, note, print_panel, print_table
from otfair_lab.cli._help import option

#: ``fairness_report``'s default ``min_group_size`` (otfair.metrics._report.MIN_GROUP_SIZE;
#: a test keeps them equal), written here so that ``--help`` imports no library code.
MIN_GROUP_SIZE = 30

if TYPE_CHECKING:
    import pandas as pd

    from otfair.metrics import FairnessReport


def _read_csv(path: Path, columns: dict[str, list[str]]) -> pd.DataFrame:
    """Read ``path`` and check that every requested column exists and is complete."""
    import pandas as pd

    if path.is_dir():
        fail(f"{path} is a directory; pass the predictions CSV file.")
    if not path.is_file():
        fail(f"file not found: {path}")
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        fail(f"{path} is empty: expected a header line and one row per individual")
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path} as CSV: {str(exc).strip().splitlines()[0]}")
    if frame.empty:
        fail(f"{path} has a header but no rows: nothing to audit")
    available = [str(c) for c in frame.columns]
    for flag, names in columns.items():
        unknown = [c for c in names if c not in frame.columns]
        if unknown:
            fail(
                f"{flag}: unknown column(s) {', '.join(map(repr, unknown))} in {path.name}; "
                f"available: {', '.join(available)}"
            )
    for flag, names in columns.items():
        for name in names:
            missing = int(frame[name].isna().sum())
            if missing:
                fail(f"{flag}: column {name!r} has {missing} missing value(s)")
    return frame


def _check_distinct(label: str, score: str, sensitive: list[str], continuous: list[str]) -> None:
    """One error line for a column named twice or a --continuous that is not --sensitive."""
    repeated = sorted({c for c in sensitive if sensitive.count(c) > 1})
    if repeated:
        fail(f"--sensitive names {', '.join(map(repr, repeated))} more than once; give each "
             "column once")  # fmt: skip
    for flag, column in (("--label", label), ("--score", score)):
        if column in sensitive:
            fail(f"{flag} column {column!r} is also a --sensitive column; give it once")
    stray = [c for c in continuous if c not in sensitive]
    if stray:
        fail(
            f"--continuous {', '.join(map(repr, stray))} is not a --sensitive column "
            f"(--sensitive: {', '.join(sensitive)})"
        )


def _labels(frame: pd.DataFrame, label: str, pos_label: str | None, task: str) -> Any:
    """Return the label column as 0/1 (classification with ``--pos-label``) or as it is."""
    column = frame[label]
    if pos_label is None:
        if task == "classification" and not _is_numeric(column):
            _stray_cells("--label", label, column)
            values = sorted(map(str, column.unique()))[:10]
            fail(
                f"--label column {label!r} holds strings ({', '.join(values)}): "
                "name the positive class with --pos-label"
            )
        return column
    if task != "classification":
        fail("--pos-label applies to --task classification only")
    text = column.astype(str).str.strip()
    if not (text == pos_label).any():
        values = sorted(text.unique())[:10]
        fail(
            f"--pos-label {pos_label!r} does not occur in --label column {label!r}; "
            f"values: {', '.join(values)}"
        )
    return (text == pos_label).astype(int)


def _stray_cells(flag: str, name: str, column: Any) -> None:
    """Fail naming the cells of a mostly numeric ``column`` that are not numbers.

    A column of numbers with one typo (``abc``) reads as strings; the words then name
    that cell (its CSV line: the header is line 1), not ``--pos-label``.
    """
    import pandas as pd

    parsed = pd.to_numeric(column, errors="coerce")
    bad = parsed.isna() & column.notna()
    if bad.any() and int(bad.sum()) * 2 < len(column):
        rows = [int(i) for i in column.index[bad.to_numpy()][:3]]
        cells = ", ".join(f"line {i + 2}: {column[i]!r}" for i in rows)
        fail(
            f"{flag} column {name!r} holds numbers but {int(bad.sum())} cell(s) that are "
            f"not ({cells}); fix or drop them"
        )


def _is_numeric(column: Any) -> bool:
    """Whether a pandas column is numeric (booleans count as numeric 0/1)."""
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column))


def _check_scores(
    frame: pd.DataFrame, score: str, task: str, label: str, pos_label: str | None
) -> Any:
    """Return the score column; predicted labels become 0/1 with ``--pos-label``.

    Rejects a non-numeric score column without ``--pos-label`` (or whose values are not
    labels of the ``--label`` column) and notes hard 0/1 predictions.
    """
    import numpy as np

    column = frame[score]
    numeric = _is_numeric(column)
    if task == "classification" and pos_label is not None:
        text = column.astype(str).str.strip()
        known = {*frame[label].astype(str).str.strip(), pos_label}
        stray = sorted(set(text) - known)
        out_of_range = numeric and bool(
            (column.to_numpy(dtype=float) < 0).any() or (column.to_numpy(dtype=float) > 1).any()
        )
        if (not numeric or out_of_range) and not stray:
            note(
                f"--score column {score!r} holds predicted labels, read as 1 where equal "
                f"to --pos-label {pos_label!r}: AUC, log loss and the score-distribution "
                "measures then describe the predicted labels"
            )
            return (text == pos_label).astype(int)
        if not numeric:
            fail(
                f"--score column {score!r} holds values that are not labels of --label "
                f"column {label!r}: {', '.join(stray[:10])} (labels: {', '.join(sorted(known))})"
            )
    if not numeric:
        _stray_cells("--score", score, column)
        if task == "classification":
            values = sorted(map(str, column.unique()))[:10]
            fail(
                f"--score column {score!r} holds strings ({', '.join(values)}): predicted "
                "labels need --pos-label naming the positive class"
            )
        fail(f"--score column {score!r} is not numeric")
    if task != "classification":
        return column
    values = column.to_numpy(dtype=float)
    if values.min() < 0.0 or values.max() > 1.0:
        fail(
            f"--score column {score!r} must hold probabilities in [0, 1] for classification "
            f"(found [{values.min():g}, {values.max():g}]); use --task regression for "
            "real-valued predictions"
        )
    if np.isin(values, (0.0, 1.0)).all():
        note(
            f"--score column {score!r} holds only 0/1 values (hard predictions?): AUC, log "
            "loss and the score-distribution measures then describe the predicted labels"
        )
    return column


def _print_tables(report: FairnessReport, title: str) -> None:
    print_panel(title, report.summary)
    if not report.by_group.empty:
        frame = report.by_group.astype(object)
        rows = [[str(name), *row.tolist()] for name, row in frame.iterrows()]
        print_table("by group", ["group", *map(str, frame.columns)], rows)
    else:
        typer.echo("no categorical sensitive column: group measures are NaN")
    if report.accuracy_disparity:
        audit = report.accuracy_disparity
        named = ", ".join(f"{k} = {g}" for k, g in enumerate(audit["groups"]))
        flat: dict[str, Any] = {"groups": named}
        flat.update((k, v) for k, v in audit.items() if isinstance(v, (int, float, str)))
        print_panel("accuracy disparity (regression)", flat)


_File = Annotated[Path, typer.Argument(help="CSV file with one row per individual.")]


def audit_command(
    file: _File,
    label: Annotated[str, option("audit", "--label")],
    score: Annotated[str, option("audit", "--score")],
    sensitive: Annotated[list[str], option("audit", "--sensitive")],
    task: Annotated[str, option("audit", "--task")] = "classification",
    threshold: Annotated[float | None, option("audit", "--threshold")] = None,
    max_categories: Annotated[int, option("audit", "--max-categories")] = 10,
    pos_label: Annotated[str | None, option("audit", "--pos-label")] = None,
    continuous: Annotated[list[str] | None, option("audit", "--continuous")] = None,
    min_group_size: Annotated[int, option("audit", "--min-group-size")] = MIN_GROUP_SIZE,
    as_json: Annotated[bool, option("audit", "--json")] = False,
) -> None:
    """Audit predictions in a CSV: performance and fairness, overall and by group.

    Group measures use the intersectional groups of the categorical --sensitive
    columns; PDP/PEO also use continuous ones (see docs/metrics.md).
    """
    if task not in ("classification", "regression"):
        fail(f"--task must be 'classification' or 'regression', got {task!r}")
    if threshold is not None and task == "regression":
        fail("--threshold applies to classification scores; a regression audit has none.")
    if max_categories < 1:
        fail(f"--max-categories must be >= 1, got {max_categories}")
    if min_group_size < 0:
        fail(f"--min-group-size must be >= 0, got {min_group_size}")
    _check_distinct(label, score, list(sensitive), list(continuous or []))
    columns = {"--label": [label], "--score": [score], "--sensitive": list(sensitive)}
    frame = _read_csv(file, columns)
    y_true = _labels(frame, label, pos_label, task)
    y_score = _check_scores(frame, score, task, label, pos_label)
    from otfair.metrics import fairness_report  # after the checks: torch-free until here

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            report = fairness_report(
                y_true,
                y_score,
                sensitive_features=frame[list(sensitive)],
                task=task,  # type: ignore[arg-type]
                threshold=0.5 if threshold is None else threshold,
                max_categories=max_categories,
                sensitive_type=dict.fromkeys(continuous or [], "continuous"),
                min_group_size=min_group_size,
            )
    except (ValueError, TypeError) as exc:
        fail(f"{file.name}: {str(exc).strip().splitlines()[0]}")
    small = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    for message in small:  # the small groups left out of the gaps: one line
        typer.secho(f"warning: {message}", err=True, fg=typer.colors.YELLOW)
    for message in report.notes:
        if message not in small:
            note(message)
    if as_json:
        echo_json(report.to_dict())
    else:
        title = f"otfair audit: {file.name} ({task}, n={report.summary['n']})"
        _print_tables(report, title)


def register(app: typer.Typer) -> None:
    """Attach the ``audit`` command to the root app."""
    app.command("audit")(audit_command)
