"""The benchmarks of benchmarks/ (public API only) and the `otfair bench` face."""

import os
import subprocess
import sys

import numpy as np
import pytest
from _benchmarks import BENCHMARKS, load
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.cli.bench import SCRIPTS


def test_ot_bench_rows_are_checked_and_rendered():
    ot_bench = load("ot_bench")
    rng = np.random.default_rng(0)
    rows = ot_bench._bench_w1d(64, 1, rng) + ot_bench._bench_otf(64, 1, rng)
    assert {r["section"] for r in rows} == {"w1d", "otf"}
    for r in rows:
        assert r["ours_ms"] > 0 and r["reference_ms"] > 0
    # the exact W matches POT on the same inputs
    assert float(rows[0]["check"].split("=")[1]) < 1e-5
    text = ot_bench.format_rows({"rows": rows, "settings": {"threads": "1"}})
    assert "wasserstein_1d" in text and "ot.sinkhorn2" in text and "alternating" in text


def test_penalty_bench_fits_every_variant_through_the_public_estimator(tmp_path):
    penalty_bench = load("penalty_bench")
    fns = penalty_bench._fit_fns(n_steps=2, batch=64, d=4, cache_dir=str(tmp_path))
    assert set(fns) == set(penalty_bench.VARIANTS)
    for fn, steps in fns.values():
        assert steps >= 2
        fn(1)


def test_every_bench_command_has_its_script():
    for script, _ in SCRIPTS.values():
        assert (BENCHMARKS / script).is_file(), script


def _fake(tmp_path, body):
    (tmp_path / "ot_bench.py").write_text(body)
    return {"OTFAIR_BENCHMARKS_DIR": str(tmp_path)}


def test_bench_face_runs_the_script_with_the_arguments(tmp_path):
    out = tmp_path / "args.txt"
    env = _fake(tmp_path, f"import sys; open({str(out)!r}, 'w').write(' '.join(sys.argv[1:]))")
    result = CliRunner().invoke(app, ["bench", "ot", "--quick", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert out.read_text() == "--quick --json"


def test_bench_face_passes_the_exit_code_on(tmp_path):
    env = _fake(tmp_path, "import sys; sys.exit(3)")
    assert CliRunner().invoke(app, ["bench", "ot"], env=env).exit_code == 3


@pytest.mark.parametrize("where", ["missing", "empty"])
def test_bench_face_outside_a_checkout_is_a_one_line_error(tmp_path, where):
    folder = tmp_path / "benchmarks"
    if where == "empty":
        folder.mkdir()
    env = {"OTFAIR_BENCHMARKS_DIR": str(folder)}
    result = CliRunner().invoke(app, ["bench", "penalties"], env=env)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "checkout" in lines[0]
    assert "Traceback" not in result.output


def test_otf_batched_bench_rows_measure_every_part():
    bench = load("otf_batched_bench")
    rows = bench.step_rows(n=64, d=4, repeats=1, ks=(2,))
    assert [r["what"].split(" ")[0] for r in rows] == ["logistic", "OTF", "OTF", "OTF", "K=2"]
    assert all(r["ms"] > 0 and r["x_logistic"] > 0 for r in rows)
    assert rows[-1]["speedup_shared"] > 0 and rows[-1]["cached_ms_per_model"] > 0
    assert "K=2" in bench.format_rows({"rows": rows, "settings": {"threads": "1"}})


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_benchmark_answers_a_wrong_flag_with_one_line_and_code_2(name):
    # `otfair bench NAME --bogus` passes --bogus to the script: its parser must answer as
    # every otfair command does (no usage block, no traceback)
    script = BENCHMARKS / SCRIPTS[name][0]
    result = subprocess.run(
        [sys.executable, str(script), "--bogus-flag"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(BENCHMARKS.parent / "src")},
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "--bogus-flag" in lines[0] and "--help" in lines[0]
