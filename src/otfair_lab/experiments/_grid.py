"""The sweep grid: datasets x methods x strengths x notions x seeds, and its runs.

:class:`SweepSpec` holds the grid and its profiles; :class:`RunConfig` is one run, with
its stable key.

:mod:`otfair_lab.experiments._spec` builds a :class:`SweepSpec` from a TOML file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

#: The profile that runs the spec as written.
FULL_PROFILE = "full"


class ConfigError(ValueError):
    """A malformed sweep spec; ``key`` is the dotted path of the offending entry."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"config key '{key}': {message}")
        self.key = key


def identity_key(identity: Mapping[str, Any]) -> str:
    """Return the run key of a run's ``identity`` (:meth:`RunConfig.identity` or its copy).

    A SHA-256 prefix of the canonical JSON, so a stored row's ``config`` (the identity,
    read back from JSON) gives back the row's key unless either was edited.
    """
    text = json.dumps(dict(identity), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines one run (one future row of the result store).

    ``dataset_label`` and ``method_label`` (how reports name the entries) and ``device``
    do not change what is computed and are left out of :meth:`key`.
    """

    dataset: str
    method: str
    seed: int
    strength: float | None = None
    notion: str | None = None
    epochs: int | None = None
    test_size: float = 0.2
    max_train_rows: int | None = None
    train_group_share: float | None = None
    dataset_options: Mapping[str, Any] = field(default_factory=dict)
    method_options: Mapping[str, Any] = field(default_factory=dict)
    source_domain: str | None = None
    target_domain: str | None = None
    audits: tuple[str, ...] = ()
    dataset_label: str = ""
    method_label: str = ""
    device: str = "cpu"

    def identity(self) -> dict[str, Any]:
        """Return the fields that determine the result (hashed by :meth:`key`)."""
        out = asdict(self)
        out.pop("dataset_label")
        out.pop("method_label")
        out.pop("device")
        if self.train_group_share is None:  # keeps the keys of earlier runs unchanged
            out.pop("train_group_share")
        if not self.audits:  # keeps the keys of runs without audits unchanged
            out.pop("audits")
        else:
            out["audits"] = list(self.audits)
        out["dataset_options"] = dict(self.dataset_options)
        out["method_options"] = dict(self.method_options)
        return out

    def key(self) -> str:
        """Stable run key: a SHA-256 prefix of the canonical JSON of :meth:`identity`."""
        return identity_key(self.identity())

    def run_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`otfair_lab.experiments.run_single`."""
        out = self.identity()
        out["device"] = self.device
        out["audits"] = list(self.audits)
        out.setdefault("train_group_share", None)
        return out


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset of a sweep: loader name, options and the label used in reports.

    ``test_size`` is the dataset's own test fraction (a paper's protocol may split one
    dataset 70/30 and the others 80/20); ``None`` uses the sweep's (a profile's
    ``test_size`` overrides both). ``train_group_share`` imbalances the training part in
    the sensitive group (see :func:`otfair_lab.experiments.run_single`; FTM Table 3).
    """

    name: str
    label: str
    options: Mapping[str, Any] = field(default_factory=dict)
    source_domain: str | None = None
    target_domain: str | None = None
    test_size: float | None = None
    train_group_share: float | None = None

    def run_fields(self) -> dict[str, Any]:
        """Return the :class:`RunConfig` fields that this dataset entry sets."""
        return {
            "dataset": self.name,
            "dataset_label": self.label,
            "dataset_options": dict(self.options),
            "source_domain": self.source_domain,
            "target_domain": self.target_domain,
            "train_group_share": self.train_group_share,
        }


@dataclass(frozen=True)
class MethodEntry:
    """One method of a sweep with its strength grid (``None`` = method default)."""

    name: str
    label: str
    strengths: tuple[float | None, ...] = (None,)
    notions: tuple[str | None, ...] = (None,)
    options: Mapping[str, Any] = field(default_factory=dict)
    epochs: int | None = None
    datasets: tuple[str, ...] | None = None

    def run_fields(self) -> dict[str, Any]:
        """Return the :class:`RunConfig` fields that this method entry sets."""
        return {
            "method": self.name,
            "method_label": self.label,
            "method_options": dict(self.options),
        }


@dataclass(frozen=True)
class Profile:
    """Overrides that shrink a sweep (``None`` keeps the spec's value)."""

    seeds: tuple[int, ...] | None = None
    epochs: int | None = None
    max_train_rows: int | None = None
    test_size: float | None = None
    max_strengths: int | None = None
    datasets: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None
    description: str = ""
    smoke: bool = False


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: the grid datasets x methods x strengths x notions x seeds."""

    name: str
    datasets: tuple[DatasetEntry, ...]
    methods: tuple[MethodEntry, ...]
    seeds: tuple[int, ...] = (0,)
    test_size: float = 0.2
    epochs: int | None = None
    max_train_rows: int | None = None
    device: str = "cpu"
    description: str = ""
    plugins: tuple[str, ...] = ()
    audits: tuple[str, ...] = ()
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    report: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def profile_names(self) -> list[str]:
        """Available profiles (``full`` is always there)."""
        return sorted({FULL_PROFILE, *self.profiles})

    def runs(self, profile: str = FULL_PROFILE) -> list[RunConfig]:
        """Expand the grid of ``profile`` into run configurations (in a stable order)."""
        if profile not in self.profiles and profile != FULL_PROFILE:
            raise ConfigError(
                f"profiles.{profile}",
                f"unknown profile; available: {', '.join(self.profile_names())}.",
            )
        prof = self.profiles.get(profile, Profile())
        seeds = prof.seeds if prof.seeds is not None else self.seeds
        rows = prof.max_train_rows if prof.max_train_rows is not None else self.max_train_rows
        # what every run of the profile shares
        shared: dict[str, Any] = {
            "max_train_rows": rows,
            "device": self.device,
            "audits": self.audits,
        }
        out: list[RunConfig] = []
        for ds in self.datasets:
            if prof.datasets is not None and ds.label not in prof.datasets:
                continue
            test_size = next(
                v for v in (prof.test_size, ds.test_size, self.test_size) if v is not None
            )
            for m in self.methods:
                if prof.methods is not None and m.label not in prof.methods:
                    continue
                if m.datasets is not None and ds.label not in m.datasets:
                    continue
                epochs = next(
                    (e for e in (prof.epochs, m.epochs, self.epochs) if e is not None), None
                )
                for strength in _thin(m.strengths, prof.max_strengths):
                    for notion in m.notions:
                        for seed in seeds:
                            out.append(
                                RunConfig(
                                    **ds.run_fields(),
                                    **m.run_fields(),
                                    strength=strength,
                                    notion=notion,
                                    seed=seed,
                                    epochs=epochs,
                                    test_size=test_size,
                                    **shared,
                                )
                            )
        return out

    def profile_info(self, profile: str = FULL_PROFILE) -> dict[str, Any]:
        """Return ``{"name", "smoke", "description"}`` of ``profile`` (stored with its runs).

        ``smoke`` marks a profile as a smoke test (e.g. ``quick``: one seed, a few epochs,
        a subsample), whose numbers only show that the pipeline runs.
        """
        self.runs(profile)  # validates the name
        prof = self.profiles.get(profile, Profile())
        return {"name": profile, "smoke": prof.smoke, "description": prof.description}

    def identity(self) -> dict[str, str]:
        """Return what identifies this spec in a result store: name, source and fingerprint.

        ``fingerprint`` is a SHA-256 prefix of the run keys of the full grid, so it
        changes when the grid changes (and not with labels, descriptions or profiles).
        """
        whole = replace(self, profiles={})  # the full grid, whatever a profile restricts
        keys = sorted(run.key() for run in whole.runs(FULL_PROFILE))
        digest = hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:16]
        return {"name": self.name, "source": self.source, "fingerprint": digest}

    def full_seeds(self) -> tuple[int, ...]:
        """Return the seeds of the whole protocol (``full`` before :meth:`with_seeds`)."""
        return tuple(sorted({c.seed for c in replace(self, profiles={}).runs(FULL_PROFILE)}))

    def with_seeds(self, profile: str, seeds: Sequence[int]) -> SweepSpec:
        """Return a copy whose ``profile`` runs only ``seeds`` (a subset of its seeds).

        A long protocol is then run seed by seed (whole seeds first), each run keeping
        its key, so the pieces resume and merge like the whole profile's. The spec's
        identity (its full grid) does not change.

        Raises
        ------
        ValueError
            If ``seeds`` is empty, repeats a seed or names one the profile does not run.
        """
        self.runs(profile)  # validates the name
        prof = self.profiles.get(profile, Profile())
        allowed = prof.seeds if prof.seeds is not None else self.seeds
        chosen = tuple(int(s) for s in seeds)
        if not chosen or len(set(chosen)) != len(chosen):
            raise ValueError(f"`seeds` must be distinct seeds of the profile; got {list(seeds)}.")
        unknown = [s for s in chosen if s not in allowed]
        if unknown:
            raise ValueError(
                f"`seeds` {unknown} are not seeds of profile {profile!r} "
                f"(its seeds: {list(allowed)})."
            )
        return replace(self, profiles={**self.profiles, profile: replace(prof, seeds=chosen)})

    def with_device(self, device: str) -> SweepSpec:
        """Return a copy of the spec whose runs use ``device``."""
        return replace(self, device=device)


def _thin(values: tuple[Any, ...], k: int | None) -> tuple[Any, ...]:
    """At most ``k`` values, evenly spaced over the grid and keeping both ends."""
    if k is None or len(values) <= k:
        return values
    if k == 1:
        return (values[len(values) // 2],)
    idx = sorted({round(i * (len(values) - 1) / (k - 1)) for i in range(k)})
    return tuple(values[i] for i in idx)
