"""``reproduce(paper, ...)``: run a paper's config through the sweep runner, then compare."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otfair_lab.reproduction._values import PAPERS

if TYPE_CHECKING:
    from otfair_lab.experiments import SweepSpec, SweepSummary
    from otfair_lab.experiments._plan import SweepPlan


@dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` did: the sweep summary (None with ``run=False``) and the report."""

    summary: SweepSummary | None
    index: Path
    pending: int


def find_config(paper: str, config: str | Path | None = None) -> Path:
    """Return the sweep config of ``paper``: ``config`` if given, else ``configs/PAPER.toml``.

    ``configs/`` is looked up in the current directory, then beside the package source
    (a checkout with an editable install).

    Raises
    ------
    ValueError
        If ``paper`` is unknown; FileNotFoundError if no config is found.
    """
    if paper not in PAPERS:
        raise ValueError(f"`paper` must be one of {sorted(PAPERS)}; got {paper!r}.")
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise FileNotFoundError(f"config file {path} does not exist.")
        return path
    here = Path(__file__).resolve().parents[3] / "configs" / f"{paper}.toml"
    for path in (Path.cwd() / "configs" / f"{paper}.toml", here):
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"configs/{paper}.toml not found in {Path.cwd()} or the otfair checkout; "
        "pass its path with --config."
    )


def _datasets(spec: SweepSpec) -> dict[str, tuple[str, str | None]]:
    from otfair_lab.reproduction._compare import dataset_sensitive

    return {d.label: (d.name, dataset_sensitive(d.name, d.options)) for d in spec.datasets}


def _short(source: str) -> str:
    """``configs/ftm.toml`` for a config file's path (the folder and the file name)."""
    return f"{Path(source).parent.name}/{Path(source).name}" if source else ""


def _stored_ok(spec: SweepSpec, profile: str, out_dir: str | Path) -> int:
    """How many of the profile's runs the store at ``out_dir`` holds ok (0 without a store)."""
    from otfair_lab.experiments import STORE_FILENAME, open_store

    if not (Path(out_dir) / STORE_FILENAME).is_file():
        return 0
    with open_store(out_dir) as store:
        return store.outcomes({c.key() for c in spec.runs(profile)})[0]


def write_from_store(
    paper: str,
    spec: SweepSpec,
    out_dir: str | Path,
    report_dir: str | Path | None = None,
    *,
    profile: str = "full",
    command: str | None = None,
    wall_time_s: float | None = None,
    unfinished: str | None = None,
) -> tuple[Path, int]:
    """Write the comparison report from the runs of ``spec``'s ``profile`` stored in ``out_dir``.

    Returns the ``index.md`` and the number of the profile's runs not stored ok yet.
    """
    import pandas as pd

    from otfair_lab.experiments import open_store
    from otfair_lab.reproduction._write import write_comparison

    configs = spec.runs(profile)
    keys = {c.key() for c in configs}
    with open_store(out_dir) as store:
        frame = store.to_frame("ok")
        info: dict[str, Any] = (store.get_meta("profiles", {}) or {}).get(profile, {})
    if not frame.empty:
        frame = frame[frame["key"].isin(keys)]
    else:
        frame = pd.DataFrame(columns=["key", "dataset", "method_name", "seed"])
    pending = len(keys) - len(frame)
    if pending:
        missing = (
            f"{pending} of the profile's {len(keys)} runs are not stored ok (not run yet or "
            "failed); rerun the same command to resume."
        )
        unfinished = f"{unfinished} {missing}" if unfinished else missing
    if not info:
        p = spec.profiles.get(profile)
        info = {"smoke": bool(p and p.smoke), "description": p.description if p else ""}
    from otfair_lab.reproduction._data import statistics_lookup

    seeds = sorted({c.seed for c in configs})
    plain = {d.label: (d.name, d.options) for d in spec.datasets if d.source_domain is None}
    sizes = {c.dataset_label: c.test_size for c in configs}
    statistics = statistics_lookup(plain, seed=seeds[0] if seeds else 0, test_size=sizes)
    index = write_comparison(
        paper,
        frame,
        _datasets(spec),
        Path(report_dir) if report_dir is not None else Path(out_dir) / "report",
        profile=profile,
        profile_info=info,
        seeds=seeds,
        paper_seeds=len(spec.full_seeds()),  # the protocol's, not a --seeds subset's
        command=command,
        wall_time_s=wall_time_s,
        unfinished=unfinished,
        config_description=f"`{_short(spec.source) or spec.name}`: {spec.description}",
        statistics=statistics,
    )
    return index, pending


def archive_runs(spec: SweepSpec, profile: str, out_dir: str | Path, runs: str | Path) -> int:
    """Write the finished runs of ``spec``'s ``profile`` in ``out_dir`` to the archive ``runs``.

    Returns the number of the profile's runs in the archive afterwards.
    """
    from otfair_lab.experiments._archive import export_runs, read_archive

    keys = {c.key() for c in spec.runs(profile)}
    export_runs(out_dir, runs, keys)
    return sum(row["key"] in keys for row in read_archive(runs))


def reproduce(
    paper: str,
    out_dir: str | Path,
    *,
    profile: str = "quick",
    report_dir: str | Path | None = None,
    config: str | Path | None = None,
    workers: int = 1,
    run: bool = True,
    progress: bool = False,
    on_plan: Callable[[SweepPlan], None] | None = None,
    command: str | None = None,
    runs: str | Path | None = None,
    device: str | None = None,
    seeds: Sequence[int] | None = None,
) -> Reproduction:
    """Run ``paper``'s config (one profile) and write the paper-vs-otfair report.

    The runs go through :func:`otfair_lab.experiments.run_sweep` into the resumable store
    ``out_dir/results.sqlite`` (a rerun skips what is stored); the report (``index.md``,
    ``comparison.csv``, PNGs) goes to ``report_dir`` (default ``out_dir/report``).

    Parameters
    ----------
    paper : {"otf", "ftm", "adapfair", "accuracy_parity"}
        The paper (its config is ``configs/PAPER.toml``, see :func:`find_config`).
    out_dir : str or Path
        The sweep store's directory.
    profile : str, default="quick"
        A profile of the config (``quick`` is a smoke test; ``one_split``; ``full``).
    report_dir, config : str or Path, optional
        Where to write the report; another config file for the paper.
    workers, progress, on_plan : int, bool, callable; default 1, False, None
        Worker processes, progress display and plan callback of
        :func:`~otfair_lab.experiments.run_sweep` (print the plan, refuse a long one).
    run : bool, default=True
        ``False`` writes the report from the stored runs only.
    command : str, optional
        The command line to cite in the report.
    runs : str or Path, optional
        An archive of finished runs (``seed-N.jsonl`` files, ``otfair_lab.experiments._archive``),
        e.g. ``docs/reproduction/PAPER/runs``: loaded into the store first (the sweep
        skips them), and the profile's finished runs are written back to it at the end,
        so a long protocol can be finished in pieces, on any machine. With ``run=False``
        the report is written from the archive (and the store) alone.
    device : str, optional
        Run on this torch device instead of the config's (not part of a run's key: runs
        made on a CPU and on a GPU resume each other).
    seeds : sequence of int, optional
        Run (and report) only these seeds of the profile (``SweepSpec.with_seeds``): a
        long protocol in whole seeds, e.g. ``profile="full", seeds=[3]`` with ``runs``
        (``--no-run --runs`` without ``seeds`` then reports the whole profile).

    Returns
    -------
    Reproduction

    Raises
    ------
    ValueError, FileNotFoundError, otfair_lab.experiments.ConfigError
        A bad paper, config or profile. ``SweepInterrupted`` propagates (finished runs
        are stored; call again to resume).
    """
    spec = _paper_spec(paper, config, profile, device=device, seeds=seeds)
    if runs is not None:
        _import_archive(paper, runs, out_dir, run=run)
    summary = None
    if run:
        sweep = {"workers": workers, "progress": progress, "on_plan": on_plan}
        summary = _run_archived(spec, profile, out_dir, runs, sweep)
    else:
        if runs is not None:  # the store's finished runs (e.g. another machine's) join it
            archive_runs(spec, profile, out_dir, runs)
        _check_stored(paper, spec, profile, out_dir, runs)
    wall_time_s = summary.wall_time_s if summary and summary.ok + summary.failed else None
    index, pending = write_from_store(
        paper, spec, out_dir, report_dir, profile=profile, command=command, wall_time_s=wall_time_s
    )
    return Reproduction(summary=summary, index=index, pending=pending)


def _import_archive(paper: str, runs: str | Path, out_dir: str | Path, *, run: bool) -> None:
    """Load the archive ``runs`` into the store (with ``run=False`` it must exist)."""
    from otfair_lab.experiments._archive import import_runs

    if not run and not Path(runs).is_dir():
        raise FileNotFoundError(
            f"`runs` {str(runs)!r} is not a folder (an archive of seed-N.jsonl files, e.g. "
            f"docs/reproduction/{paper}/runs); with --no-run there is nothing to report from."
        )
    import_runs(runs, out_dir)


def _check_stored(
    paper: str, spec: SweepSpec, profile: str, out_dir: str | Path, runs: str | Path | None
) -> None:
    """Refuse a ``--no-run`` report without a stored run of the profile."""
    if not _stored_ok(spec, profile, out_dir):
        where = f"{str(out_dir)!r}" + (f" or {str(runs)!r}" if runs is not None else "")
        raise ValueError(
            f"no run of {paper}'s profile {profile!r} is stored in {where}: --no-run writes "
            "a report from stored runs only (run without --no-run, or pass --runs "
            f"docs/reproduction/{paper}/runs)."
        )


def _paper_spec(
    paper: str,
    config: str | Path | None,
    profile: str,
    *,
    device: str | None,
    seeds: Sequence[int] | None,
) -> SweepSpec:
    """Return the paper's sweep spec, on ``device`` and restricted to ``seeds`` if given."""
    from otfair_lab.experiments import load_spec

    spec = load_spec(find_config(paper, config))
    if device is not None:
        spec = spec.with_device(device)
    if profile not in spec.profile_names():
        raise ValueError(
            f"`profile` must be one of {sorted(spec.profile_names())} for {paper}; "
            f"got {profile!r}."
        )
    if seeds is not None:
        spec = spec.with_seeds(profile, seeds)
    return spec


def _run_archived(
    spec: SweepSpec,
    profile: str,
    out_dir: str | Path,
    runs: str | Path | None,
    sweep: dict[str, Any],
) -> SweepSummary:
    """Run the sweep; its finished runs reach the archive ``runs`` even when interrupted."""
    from otfair_lab.experiments import run_sweep

    try:
        return run_sweep(spec, out_dir, profile=profile, **sweep)
    finally:
        if runs is not None:
            archive_runs(spec, profile, out_dir, runs)
