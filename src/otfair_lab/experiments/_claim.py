"""Which sweep a result store holds, and the provenance recorded with it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from otfair_lab.experiments._spec import SweepSpec
from otfair_lab.experiments._store import ResultStore


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
    from otfair import __version__

    return {"otfair_version": __version__, "git_revision": git_revision()}


def claim_store(
    store: ResultStore, spec: SweepSpec, profile: str, *, merge: bool = False
) -> dict[str, Any]:
    """Record ``spec`` and the profile run in ``store``; return the profile's info.

    The store keeps the identity of every spec that wrote to it (meta ``configs``: name,
    source file, grid fingerprint, see :meth:`SweepSpec.identity`); a spec with another
    name is refused unless ``merge=True``, so that one report never mixes two sweeps
    unknowingly. Meta ``spec_keys`` maps each sweep name to the keys of the runs its
    last sweep selected: the rows a report averages
    (:func:`otfair_lab.experiments.make_report`); rows of an earlier, edited spec or of
    another profile are listed apart there. Nothing is written before the check.

    Raises
    ------
    StoreConflictError
        If the store holds results of a sweep with another name and ``merge`` is false.
    """
    meta = {**_sweep_meta(store, spec, merge), **_profile_meta(store, spec, profile)}
    for key, value in meta.items():
        store.set_meta(key, value)
    return spec.profile_info(profile)


def _sweep_meta(store: ResultStore, spec: SweepSpec, merge: bool) -> dict[str, Any]:
    """Return the meta that names ``spec`` in ``store``; refuse another sweep's store."""
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
    spec_meta = {"name": spec.name, "description": spec.description, "report": dict(spec.report)}
    return {"configs": configs, "config": identity, "spec": spec_meta}


def _profile_meta(store: ResultStore, spec: SweepSpec, profile: str) -> dict[str, Any]:
    """Return the meta of the profile run: its run keys, its info, the last profile."""
    info = spec.profile_info(profile)
    spec_keys = dict(store.get_meta("spec_keys", {}) or {})
    spec_keys[spec.name] = sorted({c.key() for c in spec.runs(profile)})
    profiles = dict(store.get_meta("profiles", {}) or {})
    profiles[profile] = {"smoke": info["smoke"], "description": info["description"]}
    return {"spec_keys": spec_keys, "profiles": profiles, "last_profile": profile}
