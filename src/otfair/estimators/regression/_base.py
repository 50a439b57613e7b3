r"""Shared plumbing of the fair regressors: input checks, target scaling, the net, training.

The regression net of the accuracy-disparity paper (§3.2, App. B) is
:math:`X \xrightarrow{g} Z \xrightarrow{h} \hat Y` with ``g`` a ReLU MLP (the feature map)
and ``h`` a linear layer followed by a sigmoid, so predictions lie in [0, 1] like the
(min-max scaled) targets. Subclasses add an adversary on ``(Z, Y)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from numbers import Integral, Real
from typing import Any, ClassVar, cast

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data
from torch import nn

from otfair.estimators._path import check_strengths, forget_fit
from otfair.estimators._torch_base import (
    TRAINING_CONSTRAINTS,
    TorchEstimatorMixin,
    check_regression_against_constant,
    predict_in_chunks,
    warn_feature_scale,
    warn_not_converged,
)
from otfair.estimators._training import StopOnPlateau
from otfair.estimators.regression.curve import Nets, StackedNets, train_stacked_nets
from otfair.penalties import RepresentationAdversary
from otfair.utils import (
    Interval,
    StrOptions,
    Widths,
    check_consistent_length,
    check_finite_1d,
    check_strength,
    draw_seed,
    encode_groups,
    fit_context,
    non_negative_real,
    resolve_device,
    torch_generator,
    use_generator,
)
from otfair.utils._deprecation import renamed_param
from otfair.utils._torch import TORCH_READY, fits_in_training_state

__all__ = ["FairRegressorMixin", "NeuralFairRegressor", "make_encoder"]

#: What a fit learns of the data, copied to every model of a stacked run.
_DATA_ATTRIBUTES = (
    "groups_",
    "y_offset_",
    "y_scale_",
    "n_features_in_",
    "feature_names_in_",
    "device_",
)

#: The fitted attributes of every fair regressor that scales its targets
#: (``{fitted_attributes}``).
FITTED_ATTRIBUTES = """
groups_ : numpy.ndarray
    The two sensitive groups; ``groups_[1]`` is the group :math:`A = 1`
    (``UnfairRegressor``, which does not use them: those given, or none).
y_offset_, y_scale_ : float
    Target scaling applied before the fit and undone by ``predict`` (``scale_y``).
n_features_in_ : int
    Number of features seen during ``fit``.
"""
#: The convergence parameters of every regression net (``{convergence}``).
CONVERGENCE = """
tol : float or None, default=None
    ``None`` trains for exactly ``epochs`` (App. B; the adversarial nets' training MSE
    is not monotone, so a plateau is not their convergence). A float stops the training
    when the epoch's mean training MSE (scaled targets) has not improved by ``tol`` for
    ``n_iter_no_change`` consecutive epochs (scikit-learn's ``MLPRegressor`` rule;
    ``n_iter_``), and warns (:class:`sklearn.exceptions.ConvergenceWarning`) when
    ``epochs`` comes first.
n_iter_no_change : int, default=5
    Epochs without an improvement of ``tol`` that end the training.
"""
#: ``scale_y`` of every fair regressor.
SCALE_Y: list[Any] = [StrOptions({"auto"}), "boolean"]
#: A trade-off strength ``>= 0`` (a list of them is a curve: ``fairness_path``).
STRENGTHS: list[Any] = [non_negative_real()]


def make_encoder(in_features: int, hidden: Sequence[int]) -> nn.Sequential:
    """Feature map ``g``: ``Linear -> ReLU`` for every width in ``hidden``."""
    widths = [int(in_features), *[int(h) for h in hidden]]
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError(
            f"`encoder_hidden` must be a non-empty list of widths >= 1; got {hidden}."
        )
    layers: list[nn.Module] = []
    for w_in, w_out in zip(widths[:-1], widths[1:], strict=True):
        layers += [nn.Linear(w_in, w_out), nn.ReLU()]
    return nn.Sequential(*layers)


class FairRegressorMixin(RegressorMixin):
    """Input validation and target scaling shared by the fair regressors.

    ``scale_y`` decides how targets reach the model, whose predictions lie in [0, 1]
    (sigmoid head, or the bounded losses of the baselines): ``"auto"`` keeps targets
    already in [0, 1] and min-max scales others with the training minimum and maximum
    (predictions are mapped back), ``True`` always scales, ``False`` requires [0, 1].
    """

    #: whether the fit needs two sensitive groups (False: accepted, checked, unused)
    _uses_groups: ClassVar[bool] = True

    def _check_X(self, X: Any, *, reset: bool) -> np.ndarray:
        """Return ``X`` as float32, checked by scikit-learn's ``validate_data``.

        Sets (``reset``) or checks ``n_features_in_``; a fit needs two samples.
        """
        if reset:
            return validate_data(self, X, dtype=np.float32, ensure_min_samples=2, **TORCH_READY)
        return validate_data(self, X, dtype=np.float32, reset=False, **TORCH_READY)

    def _check_fit_inputs(
        self, X: Any, y: Any, sensitive_features: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``X`` (float32), targets scaled to [0, 1] and group codes in {0, 1}."""
        X = self._check_X(X, reset=True)
        y = _check_target(y)
        if sensitive_features is None and self._uses_groups:
            raise ValueError("`sensitive_features` is required (pass it as a keyword).")
        if sensitive_features is None:  # a model that does not use them (UnfairRegressor)
            codes, groups = np.zeros(len(y), dtype=np.int64), np.array([])
        else:
            codes, groups = encode_groups(sensitive_features, "sensitive_features")
        check_consistent_length(X=X, y=y, sensitive_features=codes)
        if self._uses_groups and len(groups) != 2:
            raise ValueError(
                f"`sensitive_features` must be binary; found {len(groups)} groups "
                f"({groups.tolist()[:5]})."
            )
        self.groups_ = groups
        return X, self._fit_target_scaling(y), codes

    def _fit_target_scaling(self, y: np.ndarray) -> np.ndarray:
        scale = self.scale_y  # "auto", True or False (_parameter_constraints)
        inside = y.min() >= 0.0 and y.max() <= 1.0
        if scale is False and not inside:
            raise ValueError(
                f"`y` must lie in [0, 1] (sigmoid output) when scale_y=False; got range "
                f"[{y.min():.4g}, {y.max():.4g}]. Use scale_y='auto' or rescale the targets."
            )
        if scale is True or (scale == "auto" and not inside):
            lo, hi = float(y.min()), float(y.max())
            if hi <= lo:
                raise ValueError("`y` is constant; there is nothing to regress.")
            self.y_offset_, self.y_scale_ = lo, hi - lo
        else:
            self.y_offset_, self.y_scale_ = 0.0, 1.0
        return (y - self.y_offset_) / self.y_scale_

    def _unscale(self, pred: np.ndarray) -> np.ndarray:
        return pred * self.y_scale_ + self.y_offset_


def _check_target(y: Any) -> np.ndarray:
    if y is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None.")
    arr = column_or_1d(y, warn=True)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"`y` must hold numeric regression targets (Unknown label type: dtype "
            f"{arr.dtype}). Encode the target as numbers first."
        )
    return check_finite_1d(arr, "y")


@dataclass(eq=False, repr=False)
class NeuralFairRegressor(
    TorchEstimatorMixin, TransformerMixin, FairRegressorMixin, BaseEstimator
):
    r"""Base of the neural regressors: the sigmoid regression net and its training loop.

    Minimizes, by mini-batch Adadelta over all parameters (App. B; the training loop is
    :func:`otfair.estimators.regression.curve.train_stacked_nets`, a single strength a
    stacked run of one),

    .. math::

        \mathrm{MSE}(h(g(X)), Y) + L_f\big(R_\lambda(g(X)), Y, A\big),

    where :math:`R_\lambda` is the gradient reversal layer with scale :math:`\lambda` and
    :math:`L_f` the adversary's loss given by the subclass (none for the unfair net). One
    step thus moves the adversary down :math:`L_f` at its own rate and the encoder up
    :math:`\lambda L_f` — the gradient descent-ascent of the paper's minimax game
    :math:`\min_{g,h}\max_f \mathrm{MSE} - \lambda L_f`. (The authors' code multiplies
    :math:`L_f` by :math:`\lambda` instead, which also scales the adversary's own steps,
    so a small :math:`\lambda` leaves it untrained; we keep the two roles separate.)
    A dataclass, so the constructor (the explicit signature scikit-learn's
    ``get_params`` reads) is generated from the fields: the parameters every net has are
    declared once here (keyword-only), and a subclass (decorated the same way) declares
    only its own. Subclasses define ``_make_adversary`` and ``_adversary_loss``.
    """

    #: The row of ``otfair.estimators._strength_grids.GRIDS`` that FairnessCV searches.
    _strength_grid = "regression"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "encoder_hidden": [Widths(allow_empty=False)],
        **TRAINING_CONSTRAINTS,
        "scale_y": SCALE_Y,
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    }

    _: KW_ONLY
    encoder_hidden: Sequence[int] = (60,)
    epochs: int = 50
    tol: float | None = None
    n_iter_no_change: int = 5
    batch_size: int = 256
    lr: float = 1.0
    scale_y: str | bool = "auto"
    random_state: Any = None
    device: str | torch.device = "cpu"

    def _make_adversary(self, latent_dim: int) -> RepresentationAdversary | None:
        """Build the adversary penalty on ``(Z, Y)`` (:mod:`otfair.penalties._critics`)."""
        return None

    @staticmethod
    def _adversary_loss(
        adversary: RepresentationAdversary, z: torch.Tensor, y: torch.Tensor, a: torch.Tensor
    ) -> torch.Tensor | None:
        return adversary(z, a, y)

    @staticmethod
    def _after_step(adversary: RepresentationAdversary | None) -> None:
        """Run after every optimizer step (the critic's weight clipping)."""
        if adversary is not None:
            adversary.after_step()

    def _strength(self) -> float:
        """Return the fit's strength (0 for the unfair net; ``lam`` is its deprecated name)."""
        if not hasattr(self, "strength"):
            return 0.0
        value = renamed_param(self, "lam", "strength", default=1.0)
        return check_strength(value, "strength")  # finite (inf passes the Interval)

    def _check_training_params(self) -> tuple[int, int, float, int]:
        """Return ``(epochs, batch_size, lr, n_critic)`` (validated by ``fit``)."""
        n_critic = int(getattr(self, "n_critic", 1))
        return int(self.epochs), int(self.batch_size), float(self.lr), n_critic

    def _build_nets(
        self, in_features: int, strength: float, device: torch.device
    ) -> tuple[nn.Sequential, nn.Linear, RepresentationAdversary | None]:
        """Build encoder, head and (``strength > 0``) the adversary, in this order.

        Called inside ``otfair.utils.use_generator`` (the fit's generator): the order
        fixes which of its draws initialize which module; the adversary starts clipped
        (WassersteinNet).
        """
        encoder = make_encoder(in_features, self.encoder_hidden).to(device)
        latent = int(self.encoder_hidden[-1])
        head = nn.Linear(latent, 1).to(device)
        adversary = self._make_adversary(latent) if strength > 0 else None
        if adversary is not None:
            adversary = adversary.to(device)
            self._after_step(adversary)
        return encoder, head, adversary

    @fits_in_training_state
    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None) -> NeuralFairRegressor:
        """Fit the regression net (and its adversary).

        Parameters
        ----------
        X : array-like of shape (n, d)
            Numeric features (the sensitive attribute should not be among them).
        y : array-like of shape (n,)
            Numeric targets; see ``scale_y``.
        sensitive_features : array-like of shape (n,)
            Binary sensitive attribute, used only in training: required by the fair
            nets; optional for :class:`~otfair.estimators.UnfairRegressor`, which does
            not use it.

        Returns
        -------
        self
        """
        self._fit_stacked([self], [self._strength()], X, y, sensitive_features)  # a run of one
        return self

    @fit_context  # the template's parameters; each strength below
    @fits_in_training_state
    def __otfair_fit_path__(
        self, X: Any, y: Any, sensitive_features: Any, strengths: list[float]
    ) -> list[NeuralFairRegressor]:
        """K strengths in one stacked run (:func:`otfair.estimators.fairness_path`).

        ``self`` is the template (left unfitted); net k is ``clone(self)`` with
        ``strength=strengths[k]``, with its fitted nets, ``history_`` (per-epoch ``mse`` /
        ``adversary_loss``), ``groups_``, ``n_features_in_``, the target scaling and
        ``device_``.
        """
        values = check_strengths(strengths)
        for value in values:
            check_strength(value, "strength")
        singles = [clone(self).set_params(strength=value, lam="deprecated") for value in values]
        singles[0]._fit_stacked(singles, values, X, y, sensitive_features)
        return singles

    def _fit_stacked(
        self,
        singles: list[NeuralFairRegressor],
        strengths: list[float],
        X: Any,
        y: Any,
        sensitive_features: Any,
    ) -> None:
        """Train the nets of ``singles`` (``strengths[k]`` each) in one stacked run.

        ``self`` validates the data and keeps what the fit learns of it (groups, target
        scaling, ``n_features_in_``); it builds each model's nets as its separate fit
        would, hands them to the pure training function
        (:func:`~otfair.estimators.regression.curve.train_stacked_nets`), and gives each
        single its fitted nets, history and those attributes.
        """
        epochs, batch_size, lr, n_critic = self._check_training_params()
        forget_fit(self)
        X, y_scaled, codes = self._check_fit_inputs(X, y, sensitive_features)
        raw_scale = warn_feature_scale(X, type(self).__name__)
        device = resolve_device(self.device)
        self.device_ = device
        seed = draw_seed(self.random_state)
        order = sorted(range(len(strengths)), key=lambda k: strengths[k] > 0)  # 0 first (stable)
        built: list[Nets] = []
        for k in order:  # each exactly as its separate fit builds it, on its own generator
            with use_generator(torch_generator(seed)) as init:
                built.append(singles[k]._build_nets(X.shape[1], strengths[k], device))
        nets = StackedNets.build(built, [strengths[k] for k in order])
        if nets.penalty is not None:  # WGAN-GP draws continue the last model's generator
            nets.penalty.generator = init
        K = len(strengths)
        plateau = None if self.tol is None else StopOnPlateau(self.tol, self.n_iter_no_change)
        if plateau is not None and K > 1:  # a net converged before the others ends there
            plateau.on_converged = nets.finisher(built)
        history = train_stacked_nets(
            nets,
            torch.as_tensor(X, device=device),
            torch.as_tensor(y_scaled, dtype=torch.float32, device=device),
            torch.as_tensor(codes, device=device),
            seed=seed,
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            n_critic=n_critic,
            verbose=bool(getattr(self, "verbose", False)),
            desc=type(self).__name__ + (f" (curve of {K})" if K > 1 else ""),
            stop=None if plateau is None else lambda logs: plateau({"loss": logs["mse"]}),
        )
        if plateau is not None and None in plateau.converged_at:  # a net ran to the cap
            warn_not_converged(type(self).__name__, "adadelta", epochs, float(plateau.tol))
        early = plateau.converged_at if plateau is not None and K > 1 else []
        for i, k in enumerate(order):
            done = early[i] if i < len(early) else None
            if done is None:  # trained to the last epoch
                nets.export(i, built[i])
            single, (encoder, head, adversary) = singles[k], built[i]
            if single is not self:  # what the fit learned of the data
                for name in _DATA_ATTRIBUTES:
                    if hasattr(self, name):
                        setattr(single, name, getattr(self, name))
            single.encoder_, single.head_ = encoder.eval(), head.eval()
            single.adversary_ = adversary
            single.history_ = [
                {
                    key: h[key] if K == 1 else cast(list[float], h[key])[i]
                    for key in ("mse", "adversary_loss")
                }
                for h in history[: done or len(history)]
            ]
            single.n_iter_ = done or len(history)
            (fitted,) = predict_in_chunks(single._scaled_prediction, X, device)
            single.fit_quality_warning_ = check_regression_against_constant(  # units of y
                single._unscale(fitted.astype(np.float64)),
                self._unscale(y_scaled.astype(np.float64)),
                owner=type(single).__name__,
                strength=float(strengths[k]),
                penalized=adversary is not None,
                raw_scale=raw_scale,
            )

    def _scaled_prediction(self, x: torch.Tensor) -> torch.Tensor:
        """Return the net's prediction on ``x`` in the scaled target units, shape (n,)."""
        return torch.sigmoid(self.head_(self.encoder_(x))).squeeze(1)

    @torch.no_grad()
    def predict(self, X: Any) -> np.ndarray:
        """Predicted targets, shape (n,), in the units of the training ``y``."""
        check_is_fitted(self, "encoder_")
        model = self
        X = model._check_X(X, reset=False)
        (pred,) = predict_in_chunks(model._scaled_prediction, X, model.device_)
        return model._unscale(pred.astype(np.float64))

    @torch.no_grad()
    def transform(self, X: Any) -> np.ndarray:
        """Representation :math:`Z = g(X)`, shape (n, encoder_hidden[-1]), float64."""
        check_is_fitted(self, "encoder_")
        model = self
        X = model._check_X(X, reset=False)
        (z,) = predict_in_chunks(model.encoder_, X, model.device_)
        return z.astype(np.float64)
