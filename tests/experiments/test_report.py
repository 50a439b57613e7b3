import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import pytest
from _exp_helpers import write_spec

from otfair_lab.experiments import load_spec, make_report, open_store, pareto_front, run_sweep
from otfair_lab.experiments._report import _dataset_heading, _seed_phrase, profile_banner


class _Page(HTMLParser):
    """Collect headings, blockquote text, links, images and the visible text of a page."""

    def __init__(self):
        super().__init__()
        self.headings: list[str] = []
        self.links: list[str] = []
        self.images: list[str] = []
        self.text: list[str] = []
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = []
        elif tag == "a":
            self.links.append(attrs["href"])
        elif tag == "img":
            self.images.append(attrs["src"])

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data):
        self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)


def _parse_html(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _md_headings(text: str) -> list[str]:
    return [m.group(2).strip() for m in re.finditer(r"^(#{1,6}) (.+)$", text, re.M)]


def _sweep(tmp_path, *, seeds=2, description="A two-method test sweep on synthetic data."):
    path = write_spec(tmp_path / "s.toml", seeds=seeds)
    path.write_text(f'description = "{description}"\n' + path.read_text())
    run_sweep(load_spec(path), tmp_path / "out", progress=False)
    return tmp_path / "out"


def test_pareto_front_hand_case():
    x = np.array([0.1, 0.2, 0.05, 0.3, np.nan])
    y = np.array([0.8, 0.9, 0.7, 0.85, 1.0])
    # (0.3, 0.85) is dominated by (0.2, 0.9); NaN never on the front
    assert pareto_front(x, y).tolist() == [True, True, True, False, False]
    with pytest.raises(ValueError, match="`x` and `y`"):
        pareto_front(x, y[:2])


def test_report_files_and_methods(plugin_path, tmp_path):
    index = make_report(_sweep(tmp_path))
    out = index.parent
    assert index.name == "index.md" and (out / "index.html").stat().st_size > 0
    for ext in ("png", "svg"):
        plot = out / "plots" / f"synthetic__dp_gap.{ext}"
        assert plot.stat().st_size > 1000
    assert (out / "plots" / "synthetic__dp_gap.png").read_bytes()[:4] == b"\x89PNG"
    svg = (out / "plots" / "synthetic__dp_gap.svg").read_text()
    assert "dummy-lr" in svg and "Pareto front" in svg
    # every point carries its strength (matplotlib writes each text as an SVG comment)
    for strength in ("0.01", "0.1", "1"):
        assert f"<!-- {strength} -->" in svg
    assert "mean ± std over 2 seeds" in svg
    text = index.read_text()
    assert "## synthetic (classification)" in text
    assert "dummy-lr" in text and "matched dp_gap <=" in text
    assert "Failed runs" in text and "dummy-raise" in text
    table = (out / "tables" / "synthetic.md").read_text()
    assert table.split("matched")[0].count("| dummy-lr |") == 3  # one row per strength
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 8
    # a rerun writes the same files: the SVG had a date and random element ids
    again = make_report(out.parent, tmp_path / "again").parent
    for name in ("plots/synthetic__dp_gap.svg", "plots/synthetic__dp_gap.png", "index.md"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_html_has_every_section_and_working_links(plugin_path, tmp_path):
    index = make_report(_sweep(tmp_path))
    out = index.parent
    md = index.read_text(encoding="utf-8")
    page = _parse_html(out / "index.html")
    visible = " ".join(" ".join(page.text).split())
    # every Markdown section is an HTML heading, in the same order
    assert page.headings == _md_headings(md) and len(page.headings) > 3
    # the description paragraph and the Tables link survive; no raw Markdown is left
    assert "A two-method test sweep on synthetic data." in visible
    assert "results.csv" in page.links and "tables/synthetic.md" in page.links
    assert "](" not in visible and "| ---" not in visible
    # every local link and image resolves to a file of the report
    local = [u for u in page.links + page.images if not urlparse(u).scheme]
    assert any(u.endswith(".png") for u in page.images) and any(u.endswith(".svg") for u in local)
    for url in local:
        assert (out / urlparse(url).path).is_file(), url
    # every Markdown link of index.md is one of the HTML's
    md_targets = re.findall(r"\]\(([^)]+)\)", md)
    assert sorted(set(md_targets)) == sorted(set(page.links + page.images))


def test_one_seed_is_said_and_drawn_without_error_bars(plugin_path, tmp_path):
    index = make_report(_sweep(tmp_path, seeds=1))
    svg = (index.parent / "plots" / "synthetic__dp_gap.svg").read_text()
    assert "one seed (no error bars)" in svg
    text = index.read_text()
    assert "one seed (no error bars)" in text
    # the default profile is named, not flagged
    assert "Smoke test" not in text and "Profile: `full`." in text


def test_seed_phrase():
    assert _seed_phrase(pd.Series([1, 1])) == "one seed (no error bars)"
    assert _seed_phrase(pd.Series([3, 3])) == "mean ± std over 3 seeds"
    assert _seed_phrase(pd.Series([2, 5])) == "mean ± std over 2-5 seeds"


def test_profile_banner_reads_the_profile_defensively():
    assert profile_banner(None) == [] and profile_banner("") == []
    assert "Smoke test" in profile_banner("quick")[0]
    assert profile_banner("full") == ["Profile: `full`.", ""]
    smoke = profile_banner({"name": "ci", "description": "a smoke test of the pipeline"})
    assert "Smoke test" in smoke[0] and "`ci`" in smoke[0]
    # an explicit flag wins over the name
    assert "Smoke test" not in profile_banner({"name": "quick", "smoke": False})[0]
    assert "Smoke test" in profile_banner({"name": "one_split", "smoke": True})[0]
    assert profile_banner({}) == ["Profile: `?`.", ""]


@pytest.mark.parametrize(
    "recorded",
    [
        {"last_profile": "quick"},
        {"last_profile": "full", "profile": {"name": "tiny", "smoke": True}},
    ],
)
def test_smoke_profile_is_flagged_in_both_pages(plugin_path, tmp_path, recorded):
    out = _sweep(tmp_path, seeds=1)
    with open_store(out) as store:
        for name, value in recorded.items():
            store.set_meta(name, value)
    index = make_report(out)
    assert "**Smoke test**" in index.read_text()
    page = _parse_html(index.parent / "index.html")
    assert "Smoke test" in " ".join(page.text)
    assert "<blockquote>" in (index.parent / "index.html").read_text()


def test_table_cells_escape_pipes_and_newlines():
    from otfair_lab.experiments._report import _Table

    md = _Table("t", ["a"], [["x | y\nz"]]).markdown()
    assert "| x \\| y z |" in md


def test_report_without_store(tmp_path):
    with pytest.raises(FileNotFoundError, match="No result store"):
        make_report(tmp_path)


def test_report_without_successful_run_writes_nothing(tmp_path):
    from otfair_lab.experiments._grid import RunConfig

    out = tmp_path / "out"
    with open_store(out) as store:
        store.write(
            RunConfig(dataset="adult", method="otf", seed=0),
            {"status": "error", "error": "ValueError: boom", "traceback": "..."},
        )
    with pytest.raises(ValueError, match="no successful run"):
        make_report(out)
    assert not (out / "report").exists()
    with pytest.raises(ValueError, match="no successful run"):
        make_report(out, tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_dataset_heading_names_the_task_once():
    assert _dataset_heading("adult", "regression") == "adult (regression)"
    assert _dataset_heading("adult (regression)", "regression") == "adult (regression)"


def test_a_report_measure_no_run_has_is_named_not_silently_dropped(plugin_path, tmp_path):
    path = write_spec(tmp_path / "s.toml", '\n[report]\nfairness = ["dp_gap", "nope_gap"]\n')
    run_sweep(load_spec(path), tmp_path / "out", progress=False)
    text = make_report(tmp_path / "out").read_text()
    assert "not drawn: `nope_gap` (fairness)" in text
    assert "dp_gap" not in text.split("not drawn:")[1].splitlines()[0]  # drawn, not listed
    assert (tmp_path / "out" / "report" / "plots" / "synthetic__dp_gap.png").is_file()


def _points(index: Path) -> pd.Series:
    """``seeds`` of each dummy-lr row of the report's strength table."""
    table = (index.parent / "tables" / "synthetic.md").read_text().split("matched")[0]
    cells = [line.split("|") for line in table.splitlines() if line.startswith("| dummy-lr |")]
    return pd.Series({c[2].strip(): int(c[3]) for c in cells})


def test_rows_of_an_edited_spec_are_listed_apart_not_averaged_as_seeds(plugin_path, tmp_path):
    # a one-seed sweep, then the same sweep with an edited option, resumed into its --out:
    # the first sweep's rows must not pass for a second seed of the edited one
    run_sweep(
        load_spec(write_spec(tmp_path / "a.toml", seeds=1)), tmp_path / "out", progress=False
    )
    edited = load_spec(write_spec(tmp_path / "a.toml", seeds=1, options="cold_start = 0.0"))
    run_sweep(edited, tmp_path / "out", progress=False)
    with open_store(tmp_path / "out") as store:
        assert store.count("ok") == 6  # 3 strengths x 2 configurations, 1 seed
    index = make_report(tmp_path / "out")
    assert _points(index).to_dict() == {"0.01": 1, "0.1": 1, "1": 1}  # not "2 seeds"
    text = index.read_text()
    assert "3 successful runs (3 more successful runs are of another configuration" in text
    apart = text.split("### Runs outside this spec")[1].split("###")[0]
    rows = [ln for ln in apart.splitlines() if ln.startswith("| synthetic | dummy-lr |")]
    assert len(rows) == 3 and all("method_options" in ln for ln in rows)
    assert "one seed (no error bars)" in text


def test_a_row_whose_key_was_edited_is_listed_apart(plugin_path, tmp_path):
    import sqlite3

    out = _sweep(tmp_path, seeds=2)
    db = out / "results.sqlite"
    with sqlite3.connect(db) as conn:
        key = conn.execute("SELECT key FROM runs WHERE status='ok' LIMIT 1").fetchone()[0]
        conn.execute("UPDATE runs SET key = ? WHERE key = ?", ("0" * 24, key))
        conn.execute("DELETE FROM meta WHERE name = 'spec_keys'")  # a store of before
    conn.close()
    index = make_report(out)
    assert sorted(_points(index).to_list()) == [1, 2, 2]  # the edited row is in no mean
    text = index.read_text()
    assert "its key is not the key of its configuration" in text


def test_the_training_budget_line_names_the_methods_a_value_applies_to():
    # only norm ran with epochs = 30; gapreg's L-BFGS ran to its own default (stored
    # null): the line said "30 epochs" for every run
    import pandas as pd

    from otfair_lab.experiments._report import _budget_lines

    frame = pd.DataFrame(
        {
            "method": ["norm", "norm", "gapreg", "gapreg"],
            "epochs": [30, 30, None, None],
            "max_train_rows": [2000] * 4,
        }
    )
    (line, _) = _budget_lines(frame)
    assert "2,000 training rows per split at most" in line
    assert "30 epochs (norm; the other methods at their own defaults)" in line
    same = _budget_lines(frame.assign(epochs=30))[0]
    assert same.endswith("; 30 epochs.")


def test_a_long_warning_line_ends_in_an_ellipsis_not_mid_sentence():
    import warnings

    from otfair_lab.experiments._execute import WARNING_LINE_MAX, warning_line

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("x" * 2000 + " the fix", UserWarning, stacklevel=1)
        warnings.warn("short one", UserWarning, stacklevel=1)
    long, short = (warning_line(w) for w in caught)
    assert len(long) == WARNING_LINE_MAX and long.endswith("…")
    assert short == "UserWarning: short one"


def test_fits_that_ended_below_the_constant_are_marked_with_their_count():
    # a sweep printed the FitQualityWarning once on stderr, and the report then offered
    # the run as a method's best model; the stored flag now marks its row and says why
    from otfair_lab.experiments._report import _strength_table, aggregate
    from otfair_lab.experiments._report_plot import fit_quality_note

    frame = pd.DataFrame(
        {
            "dataset": ["d"] * 4,
            "method": ["norm", "norm", "gapreg", "gapreg"],
            "notion": [None] * 4,
            "strength": [0.9, 0.9, 1.0, 1.0],
            "seed": [0, 1, 0, 1],
            "accuracy": [0.55, 0.80, 0.81, 0.82],
            "fit_quality_warning": [True, False, False, False],
        }
    )
    agg = aggregate(frame, ["accuracy"])
    rows = {r[0] for r in _strength_table(agg, "d", ["accuracy"]).rows}
    assert "norm **below constant (training)** 1/2" in rows and "gapreg" in rows
    assert fit_quality_note(agg).startswith("**below constant (training)** (1 row)")
    assert fit_quality_note(aggregate(frame.drop(columns="fit_quality_warning"), [])) == ""


def test_a_gaps_error_bar_stops_at_zero():
    from otfair_lab.experiments._report_plot import _clipped_at_zero

    bars = _clipped_at_zero([0.01, 0.5], [0.03, 0.1])
    np.testing.assert_allclose(bars, [[0.01, 0.1], [0.03, 0.1]])  # below, above
