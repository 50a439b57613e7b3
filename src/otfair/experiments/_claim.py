"""Which sweep a result store holds, and the provenance recorded with it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from otfair.experiments._spec import SweepSpec
from otfair.experiments._store import ResultStore


class StoreConflictError(ValueError):
    """The output directory holds another sweep's results (pass ``merge=True`` to add)."""


def git_revision() -> str | None:
    """Git revision of the otfair source tree (``+dirty`` if modified), if available."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=Path(__file__).resolve().parents[1],  # the otfair package
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def source_versions() -> dict[str, Any]:
    from otfair._version import __version__

    return {"otfair_version": __version__, "git_revision": git_revision()}


def claim_store(store: ResultStore, spec: SweepSpec, *, merge: bool = False) -> None:
    """Record ``spec`` in ``store``, refusing a store that holds another sweep.

    The store keeps the identity of every spec that wrote to it (meta ``configs``: name,
    source file, grid fingerprint, see :meth:`SweepSpec.identity`); a spec with another
    name is refused unless ``merge=True``, so that one report never mixes two sweeps
    unknowingly.

    Raises
    ------
    StoreConflictError
        If the store holds results of a sweep with another name and ``merge`` is false.
    """
    identity = spec.identity()
    configs = [c for c in store.get_meta("configs", []) or [] if isinstance(c, dict)]
    others = sorted(store.sweep_names() - {spec.name})
    if others and not merge:
        sources = {c.get("name"): c.get("source") for c in configs}
        held = ", ".join(f"{n!r} ({sources[n]})" if sources.get(n) else repr(n) for n in others)
        this = f"{spec.name!r}" + (f" ({spec.source})" if spec.source else "")
        raise StoreConflictError(
            f"{store.path.parent} already holds sweep {held}; this is {this}. Use another "
            "--out, or pass --merge (merge=True) to add its runs to the same store."
        )
    configs = [c for c in configs if c.get("name") != spec.name] + [identity]
    store.set_meta("configs", configs)
    store.set_meta("config", identity)
    store.set_meta(
        "spec", {"name": spec.name, "description": spec.description, "report": dict(spec.report)}
    )


def record_profile(store: ResultStore, spec: SweepSpec, profile: str) -> dict[str, Any]:
    """Record the profile run and the run keys of the spec's selection; return its info.

    Meta ``spec_keys`` maps each sweep name to the keys of the runs its last sweep
    selected: the rows a report averages (:func:`otfair.experiments.make_report`); rows
    of an earlier, edited spec or of another profile are listed apart there.
    """
    info = spec.profile_info(profile)
    spec_keys = dict(store.get_meta("spec_keys", {}) or {})
    spec_keys[spec.name] = sorted({c.key() for c in spec.runs(profile)})
    store.set_meta("spec_keys", spec_keys)
    profiles = dict(store.get_meta("profiles", {}) or {})
    profiles[profile] = {"smoke": info["smoke"], "description": info["description"]}
    store.set_meta("profiles", profiles)
    store.set_meta("last_profile", profile)
    return info
