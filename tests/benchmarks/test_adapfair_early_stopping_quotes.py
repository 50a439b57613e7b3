"""docs/measurements/adapfair_early_stopping: the report is the CSV's; docs/adapfair.md's
sentences about the curve are the CSV's."""

from __future__ import annotations

from tests.benchmarks._measured import MEASURED, ROOT, benchmark_script, measured_rows


def _rows() -> list[dict[str, str]]:
    return measured_rows("adapfair_early_stopping")


def _script():
    return benchmark_script("adapfair_early_stopping")


def _point(rows, dataset, early, strength):
    (row,) = [
        r
        for r in rows
        if (r["dataset"], r["early_stopping"], float(r["strength"]))
        == (dataset, str(early), strength)
    ]
    return row


def test_the_report_is_generated_from_the_csv_alone():
    script = _script()
    page = (MEASURED / "adapfair_early_stopping.md").read_text(encoding="utf-8")
    command = page.split("Last command: `", 1)[1].split("`", 1)[0]
    assert script.report(_rows(), command) + "\n" == page


def test_every_curve_is_whole_and_the_early_stop_never_trains_longer():
    rows = _rows()
    for dataset in {r["dataset"] for r in rows}:
        for early in ("True", "False"):
            part = [r for r in rows if (r["dataset"], r["early_stopping"]) == (dataset, early)]
            assert sorted(float(r["strength"]) for r in part) == [0.1, 0.3, 0.5, 0.9]
    for r in rows:  # the cap, 50 epochs, without the early stop; fewer with it
        if r["early_stopping"] == "False":
            assert int(r["n_iter"]) == 50
        else:
            assert int(r["n_iter"]) < 50


def test_the_adapfair_page_quotes_the_curves():
    rows = _rows()
    early = _point(rows, "adult", True, 0.1)
    full = _point(rows, "adult", False, 0.5)
    fairest = _point(rows, "adult", False, 0.1)
    points = {
        "early": (early["test_dp_gap"], early["test_accuracy"]),
        "full": (full["test_dp_gap"], full["test_accuracy"]),
        "fairest": (fairest["test_dp_gap"], fairest["test_accuracy"]),
    }
    adult_early = [r for r in rows if (r["dataset"], r["early_stopping"]) == ("adult", "True")]
    assert min(float(r["test_dp_gap"]) for r in adult_early) == float(early["test_dp_gap"])
    # "fairer and more accurate than the 50-epoch flows at strength 0.5"
    assert float(early["test_dp_gap"]) < float(full["test_dp_gap"])
    assert float(early["test_accuracy"]) > float(full["test_accuracy"])
    # "only the 50-epoch flows at strength 0.1 go lower"
    gap = float(early["test_dp_gap"])
    lower = [r for r in rows if r["dataset"] == "adult" and float(r["test_dp_gap"]) < gap]
    assert [(r["early_stopping"], r["strength"]) for r in lower] == [("False", "0.1000")]
    diabetes = [r for r in rows if r["dataset"] == "diabetes"]
    worst_early = min(float(r["test_accuracy"]) for r in diabetes if r["early_stopping"] == "True")
    best_full = max(float(r["test_accuracy"]) for r in diabetes if r["early_stopping"] == "False")
    assert worst_early > best_full
    for dataset in {r["dataset"] for r in rows}:
        cpu = {r["early_stopping"]: float(r["cpu_s"]) for r in rows if r["dataset"] == dataset}
        assert cpu["True"] < cpu["False"] / 3, dataset
    page = " ".join((ROOT / "docs" / "adapfair.md").read_text(encoding="utf-8").split())
    for quoted in (
        "the early-stopped flows reach a test DP gap of {} at accuracy {} (strength 0.1), "
        "fairer and more accurate than the 50-epoch flows at strength 0.5 ({} at {}); only "
        "the 50-epoch flows at strength 0.1 go lower ({}, at {})".format(
            *points["early"], *points["full"], *points["fairest"]
        ),
        "On Diabetes every early-stopped model is more accurate than every 50-epoch one, "
        "and each early-stopped curve costs under a third of the other's CPU",
    ):
        assert quoted in page, quoted
