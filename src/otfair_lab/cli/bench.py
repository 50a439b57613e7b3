"""`otfair bench NAME [ARGS]`: run a script of the checkout's ``benchmarks/`` directory.

The benchmarks are not part of the installed package: they live in ``benchmarks/`` of a
source checkout and use the public API only. This command is a thin face that finds
that directory and runs the script with the current interpreter, passing every further
argument through (e.g. ``otfair bench ot --quick --json``). Outside a checkout it exits
with a one-line error (code 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer

import otfair
from otfair_lab.cli._common import fail

#: command name -> (script in benchmarks/, one-line description)
SCRIPTS: dict[str, tuple[str, str]] = {
    "ot": ("ot_bench.py", "OT primitives vs POT / scipy at n = 256, 1024, 4096."),
    "penalties": ("penalty_bench.py", "Training step of each penalty relative to plain ERM."),
    "adapfair": ("adapfair_bench.py", "AdapFair epoch with exact W2 vs Sinkhorn; targets."),
    "otf-batched": ("otf_batched_bench.py", "OTF step parts; K score vectors on one cost."),
    "otf-ratio": ("otf_ratio_bench.py", "OTF logistic fit / unpenalized fit on Adult."),
    "device": ("device_bench.py", "One fit and K = 8 / 32 curves on --device cpu|cuda."),
    "k1-fit": ("k1_fit_bench.py", "Single-strength fit time, this tree vs HEAD."),
    "estimate": ("estimate_bench.py", "Sweep estimates vs real wall time (quick profiles)."),
    "curve-drift": ("curve_drift.py", "Stacked curve vs separate fits over a whole fit."),
}

ENV = "OTFAIR_BENCHMARKS_DIR"

bench_app = typer.Typer(
    help="Run the benchmarks of a source checkout (benchmarks/); arguments pass through.",
    no_args_is_help=True,
)


def _package_src() -> Path:
    """Return the directory holding the imported ``otfair`` (``src/`` in a checkout)."""
    return Path(otfair.__file__).resolve().parent.parent


def find_benchmarks() -> Path | None:
    """Return the benchmarks directory, or None if there is none.

    ``$OTFAIR_BENCHMARKS_DIR``, else ``benchmarks/`` of the checkout that holds the
    imported package, else ``./benchmarks``.
    """
    if os.environ.get(ENV):
        path = Path(os.environ[ENV])
        return path if path.is_dir() else None
    for path in (_package_src().parent / "benchmarks", Path.cwd() / "benchmarks"):
        if path.is_dir():
            return path
    return None


def _run(name: str, args: list[str]) -> None:
    script_name = SCRIPTS[name][0]
    folder = find_benchmarks()
    script = None if folder is None else folder / script_name
    if script is None or not script.is_file():
        fail(
            f"`otfair bench {name}` runs benchmarks/{script_name} of a source checkout, and "
            f"none was found (not installed with the package); run it from a clone of the "
            f"repository or set {ENV}."
        )
    env = dict(os.environ)  # the script imports the same otfair as this command
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_package_src()), env.get("PYTHONPATH")]))
    code = subprocess.run([sys.executable, str(script), *args], env=env, check=False).returncode
    if code:
        raise typer.Exit(code)


def _command(name: str, description: str) -> None:
    def command(ctx: typer.Context) -> None:
        _run(name, list(ctx.args))

    command.__doc__ = f"{description} Runs benchmarks/{SCRIPTS[name][0]} [ARGS]."
    bench_app.command(
        name,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,  # --help goes to the script
    )(command)


for _name, (_, _description) in SCRIPTS.items():
    _command(_name, _description)


def register(app: typer.Typer) -> None:
    """Attach the ``bench`` command group to the root app."""
    app.add_typer(bench_app, name="bench")
