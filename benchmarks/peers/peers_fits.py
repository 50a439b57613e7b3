"""Peers page, the fits: data, fairret's training loop, one fit of every method.

See ``benchmarks/peers/__main__.py`` for the protocol.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torch.nn import functional as F

from otfair.estimators import FairClassifier, ReductionClassifier
from otfair.metrics import demographic_parity_gap

#: fairret's plain torch loop: Adam at lr 1e-3, 100 epochs of batches of 1000 stratified
#: by group, FairClassifier's initialization (otfair's methods run at their defaults)
EPOCHS = 100
BATCH_SIZE = 1000
LR = 1e-3
#: methods trained in training (not post-processing a fitted model)
IN_TRAINING = ("unfair", "otf", "norm", "gapreg", "ftm", "fairret-norm", "fairret-kl")
METHODS = (*IN_TRAINING, "reduction", "threshold-opt", "error-parity")


# --------------------------------------------------------------------------- data
@dataclass
class Data:
    """Train/test arrays of one split (binary sensitive attribute as 0/1 codes)."""

    X_train: np.ndarray
    y_train: np.ndarray
    s_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    s_test: np.ndarray


def load(dataset: str, seed: int) -> Data:
    """Load ``dataset`` and split it with ``random_state=seed`` (one binary attribute)."""
    from otfair.datasets import load_dataset

    sp = load_dataset(dataset).split(random_state=seed)
    s_tr, s_te = (np.asarray(a).reshape(len(a), -1)[:, 0].astype(np.int64) for a in
                  (sp.s_train, sp.s_test))  # fmt: skip
    return Data(
        np.asarray(sp.X_train, np.float32),
        np.asarray(sp.y_train, np.int64),
        s_tr,
        np.asarray(sp.X_test, np.float32),
        np.asarray(sp.y_test, np.int64),
        s_te,
    )


def scores(y: np.ndarray, pred: np.ndarray, score: np.ndarray, s: np.ndarray) -> dict:
    """Accuracy and DP gap of the hard predictions ``pred``, AUC of ``score``."""
    return {
        "accuracy": float(np.mean(pred == y)),
        "auc": float(roc_auc_score(y, score)),
        "dp_gap": float(demographic_parity_gap(y, pred.astype(float), sensitive_features=s)),
    }


# --------------------------------------------------------------------------- fairret loop
def build_model(n_features: int, model: str) -> torch.nn.Module:
    """Build the network of ``FairClassifier(model=...)``: linear or two ReLU layers of width d."""
    widths = [n_features] + ([n_features, n_features] if model == "mlp" else [])
    layers: list[torch.nn.Module] = []
    for w_in, w_out in zip(widths[:-1], widths[1:], strict=True):
        layers += [torch.nn.Linear(w_in, w_out), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(widths[-1], 1))
    return torch.nn.Sequential(*layers)


def stratified_batches(
    groups: np.ndarray, batch_size: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """One epoch of near-equal batches in which every group keeps its proportion.

    Each group is shuffled and its members get positions ``(rank + U) / size``; the
    sorted positions are cut into ``ceil(n / batch_size)`` consecutive batches (the
    batching that FairClassifier documents: batches stratified by sensitive group).
    """
    pos = np.empty(len(groups))
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        pos[rng.permutation(members)] = (np.arange(len(members)) + rng.random()) / len(members)
    order = np.argsort(pos)
    return np.array_split(order, max(1, math.ceil(len(order) / batch_size)))


def fit_fairret(
    loss_fn: torch.nn.Module | None,
    strength: float,
    X: np.ndarray,
    y: np.ndarray,
    s: np.ndarray,
    *,
    model: str = "logistic",
    epochs: int = EPOCHS,
    batch_size: int = BATCH_SIZE,
    random_state: int = 0,
) -> torch.nn.Module:
    """Train ``CE + strength * loss_fn(logits, onehot(s))`` as FairClassifier trains.

    The seed is derived from ``random_state`` as FairClassifier derives it, so the
    initialisation and batch order are those of ``FairClassifier(model=model,
    random_state=random_state)``; with ``strength=0`` the two fits coincide.
    """
    seed = int(np.random.RandomState(random_state).randint(2**31 - 1))
    rng = np.random.default_rng(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = build_model(X.shape[1], model)
        opt = torch.optim.Adam(net.parameters(), lr=LR)
        Xt, yt = torch.from_numpy(X), torch.from_numpy(y.astype(np.float32))
        sens = F.one_hot(torch.from_numpy(s), 2).float()
        for _ in range(epochs):
            for idx in stratified_batches(s, batch_size, rng):
                it = torch.from_numpy(idx)
                logits = net(Xt[it])
                loss = F.binary_cross_entropy_with_logits(logits[:, 0], yt[it])
                if loss_fn is not None and strength > 0:
                    loss = loss + strength * loss_fn(logits, sens[it])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    net.eval()
    return net


def torch_proba(net: torch.nn.Module, X: np.ndarray) -> np.ndarray:
    """P(y=1) of a logit network."""
    with torch.no_grad():
        return torch.sigmoid(net(torch.from_numpy(X))[:, 0]).double().numpy()


def fairret_loss(method: str) -> torch.nn.Module:
    """Return the fairret loss of ``method`` with the demographic-parity statistic."""
    from fairret.loss import KLProjectionLoss, NormLoss
    from fairret.statistic import PositiveRate

    cls = {"fairret-norm": NormLoss, "fairret-kl": KLProjectionLoss}[method]
    return cls(PositiveRate())


# --------------------------------------------------------------------------- one fit
def cpu_time(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` and return its result and the process CPU seconds it took."""
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


class Runner:
    """Fits the methods of one (dataset, model, seed); caches the unfair base model."""

    def __init__(self, dataset: str, model: str, seed: int, data: Data | None = None) -> None:
        self.dataset, self.model, self.seed = dataset, model, seed
        self.data = data if data is not None else load(dataset, seed)
        self._base: tuple[FairClassifier, float] | None = None

    def base(self) -> tuple[FairClassifier, float]:
        """Return the unfair ``FairClassifier("none")`` of the family and its fit CPU seconds."""
        if self._base is None:
            self._base = cpu_time(lambda: self._otfair("none", 0.0))
        return self._base

    def _otfair(self, penalty: str, strength: float) -> FairClassifier:
        d = self.data
        # the defaults, but the MLP's network is stated: two layers of width d (hidden=None,
        # the FTM paper's; the page was measured with it, and fairret's loop builds it)
        hidden = None if self.model == "mlp" else "auto"
        clf = FairClassifier(
            penalty, strength, model=self.model, hidden=hidden, random_state=self.seed
        )
        return clf.fit(d.X_train, d.y_train, sensitive_features=d.s_train)

    def fit(self, method: str, strength: float) -> list[dict]:
        """Fit ``method`` at ``strength``; returns one row per reported method."""
        d = self.data
        rows: list[tuple[str, dict, float]] = []
        if method in ("unfair", "otf", "norm", "gapreg", "ftm"):
            if method == "unfair":
                clf, sec = self.base()
            else:
                clf, sec = cpu_time(lambda: self._otfair(method, strength))
            p = clf.predict_proba(d.X_test)[:, 1]
            metrics = scores(d.y_test, clf.predict(d.X_test), p, d.s_test)
            rows.append((method, {**metrics, "solver": clf.solver_, "epochs": clf.n_iter_}, sec))
        elif method.startswith("fairret-"):
            net, sec = cpu_time(
                lambda: fit_fairret(
                    fairret_loss(method),
                    strength,
                    d.X_train,
                    d.y_train,
                    d.s_train,
                    model=self.model,
                    epochs=EPOCHS,
                    random_state=self.seed,
                )
            )
            p = torch_proba(net, d.X_test)
            metrics = scores(d.y_test, (p >= 0.5).astype(int), p, d.s_test)
            rows.append((method, {**metrics, "solver": "adam", "epochs": EPOCHS}, sec))
        elif method == "reduction":
            clf, sec = cpu_time(
                lambda: ReductionClassifier(eps=strength, random_state=self.seed).fit(
                    d.X_train, d.y_train, sensitive_features=d.s_train
                )
            )
            p = clf.predict_proba(d.X_test)[:, 1]
            rows.append((method, scores(d.y_test, clf.predict(d.X_test), p, d.s_test), sec))
            # fairlearn's own (randomized) predict of the same ExponentiatedGradient fit
            hard = np.asarray(clf.mitigator_.predict(d.X_test, random_state=self.seed))
            rows.append(("exp-gradient", scores(d.y_test, hard, p, d.s_test), sec))
        elif method == "threshold-opt":
            from fairlearn.postprocessing import ThresholdOptimizer

            base, base_sec = self.base()
            to = ThresholdOptimizer(
                estimator=base,
                constraints="demographic_parity",
                prefit=True,
                predict_method="predict_proba",
                tol=strength if strength > 0 else None,
            )
            _, sec = cpu_time(lambda: to.fit(d.X_train, d.y_train, sensitive_features=d.s_train))
            hard = np.asarray(to.predict(d.X_test, sensitive_features=d.s_test,
                                         random_state=self.seed))  # fmt: skip
            p = np.asarray(to._pmf_predict(d.X_test, sensitive_features=d.s_test))[:, 1]
            rows.append((method, scores(d.y_test, hard, p, d.s_test), base_sec + sec))
        elif method == "error-parity":
            from error_parity import RelaxedThresholdOptimizer

            base, base_sec = self.base()
            rto = RelaxedThresholdOptimizer(
                predictor=lambda X: base.predict_proba(X)[:, 1],
                constraint="demographic_parity",
                tolerance=strength,
                seed=self.seed,
            )
            _, sec = cpu_time(lambda: rto.fit(d.X_train, d.y_train, group=d.s_train))
            hard = np.asarray(rto.predict(d.X_test, group=d.s_test)).astype(int)
            rows.append((method, scores(d.y_test, hard, hard, d.s_test), base_sec + sec))
        else:
            raise ValueError(f"unknown method {method!r}; expected one of {METHODS}.")
        return [
            {
                "dataset": self.dataset,
                "model": self.model,
                "method": name,
                "strength": strength,
                "seed": self.seed,
                "solver": "",
                "epochs": "",
                **metrics,
                "fit_cpu_s": round(sec, 2),
            }
            for name, metrics, sec in rows
        ]
