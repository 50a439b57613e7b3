from typer.testing import CliRunner

from otfair.cli import app
from otfair.experiments import demo_spec, open_store


def test_demo_spec_is_small():
    spec = demo_spec()
    runs = spec.runs()
    assert {r.dataset for r in runs} == {"synthetic"} and len(runs) <= 16
    assert {"unfair", "unfair-mlp", "gapreg", "ftm", "otf"} <= {r.method for r in runs}
    assert demo_spec("synthetic_regression").runs()[0].method == "unfair-reg"


def test_demo_end_to_end(tmp_path):
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "Report:" in res.output
    with open_store(tmp_path) as store:
        assert store.count("ok") == len(demo_spec().runs())
    assert (tmp_path / "report" / "plots" / "synthetic__dp_gap.png").stat().st_size > 1000
    index = (tmp_path / "report" / "index.md").read_text()
    assert all(m in index for m in ("unfair", "gapreg", "ftm", "otf"))
