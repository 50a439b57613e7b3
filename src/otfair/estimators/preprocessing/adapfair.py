r"""AdapFair: invertible preprocessors that make a frozen classifier fair.

Implements Huang et al., 2024, §III (eq. 1, Algorithm 1) and §III-D. Given a trained classifier
:math:`f` whose parameters never change, learn invertible flows :math:`T_0, T_1`
(sensitive-attribute *aware*) or a single :math:`T` (*blind*: no sensitive attribute at
deployment) minimizing

.. math::

    \lambda\, \mathbb{E}\bigl[\ell_{CE}\bigl(Y, f(T_S(X))\bigr)\bigr]
    + (1 - \lambda)\, \sum_c \mathcal{W}\bigl(p(f(T_0(X_0)) \mid c),\,
    p(f(T_1(X_1)) \mid c)\bigr),

where the cells :math:`c` depend on the fairness notion (see
:class:`otfair.penalties.GroupWassersteinLoss`). The cross-entropy always uses all samples.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, cast

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._torch_base import (
    TRAINING_CONSTRAINTS,
    TorchEstimatorMixin,
    warn_feature_scale,
    warn_not_converged,
)
from otfair.estimators._training import EpochLogs, predict_from_proba
from otfair.estimators.preprocessing._adapfair_training import (
    check_preprocessed_fit,
    fit_generators,
    held_out_stop,
    train_stratified,
)
from otfair.estimators.preprocessing.adapfair_scorer import (
    TorchScorer,
    as_torch_classifier,
    frozen,
    state_fingerprint,
)
from otfair.models.flows import CouplingFlow
from otfair.notions import Notion, as_notion, stratum_codes
from otfair.penalties._group_wasserstein import DISTANCES, GroupWassersteinLoss
from otfair.utils import (
    Interval,
    StrOptions,
    Widths,
    check_consistent_length,
    check_features,
    encode_groups,
    fit_context,
    positive_int,
    positive_real,
    resolve_device,
    torch_generator,
    use_generator,
)
from otfair.utils._deprecation import DEPRECATED, LAM_DOC, renamed_param
from otfair.utils._docstrings import fill_doc
from otfair.utils._torch import fits_in_training_state

_MODES = ("aware", "blind")


@dataclass(eq=False, repr=False)
class FlowParams:
    """The parameters of AdapFair's flows, declared once (keyword-only dataclass fields).

    :class:`AdapFairPreprocessor` and :class:`AdapFairClassifier` (which builds one) both
    take them; each adds its own. Not for direct use.
    """

    _: KW_ONLY
    output: Literal["logits", "probability"] = "logits"
    mode: str = "aware"
    notion: str = "dp"
    strength: float = 0.5
    distance: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "w2"
    sinkhorn_eps: float = 0.01
    n_blocks: int = 4
    hidden: tuple[int, ...] = (20, 20)
    epochs: int = 50
    batch_size: int = 256
    lr: float = 1e-3
    early_stopping: bool = True
    validation_fraction: float = 0.1
    n_iter_no_change: int = 10
    tol: float = 1e-4
    random_state: int | None = None
    device: str | torch.device | None = None
    verbose: bool = False
    lam: float | str = "deprecated"


@fill_estimator_doc
@fill_doc(lam=LAM_DOC)
@dataclass(eq=False, repr=False)
class AdapFairPreprocessor(
    TorchEstimatorMixin, TransformerMixin, ClassifierMixin, BaseEstimator, FlowParams
):
    r"""Fair invertible preprocessors in front of a frozen classifier (AdapFair).

    Parameters
    ----------
    classifier : torch.nn.Module, callable, scikit-learn or otfair classifier
        The trained classifier :math:`f` (see
        :func:`~otfair.estimators.as_torch_classifier`). It is never modified: during
        ``fit`` it is in eval mode with ``requires_grad=False`` (both restored afterwards),
        only the flows are given to the optimizer, and a SHA-256 fingerprint of its
        ``state_dict`` is compared before and after training.
    output : {"logits", "probability"}, default="logits"
        What a torch module / callable ``classifier`` returns.
    mode : {"aware", "blind"}, default="aware"
        ``"aware"`` learns one flow per group and needs ``sensitive_features`` at
        prediction time; ``"blind"`` learns one flow for everybody (§III-D).
    notion : {"dp", "eopp", "eo"}, default="dp"
        Demographic parity, equal opportunity or equalized odds.
    strength : float, default=0.5
        The paper's trade-off :math:`\lambda \in [0, 1]` of eq. (1): the weight of the
        cross-entropy, the fairness term getting :math:`1 - \lambda` (so the fairer
        models have the smaller strengths, as in the paper's figures).
    distance : {"w2", "sharp_sinkhorn"} or callable, default="w2"
        Exact 1-D :math:`W_2^2` by sorting, or the paper's sharp Sinkhorn value, or a
        differentiable ``distance(u, v) -> 0-d tensor`` between two score samples.
    sinkhorn_eps : float, default=0.01
        Entropic regularization of the sharp Sinkhorn option (scores and costs lie in
        [0, 1]).
    n_blocks : int, default=4
        Coupling blocks per flow (``CouplingFlow``).
    hidden : tuple of int, default=(20, 20)
        Conditioner widths (the paper's 20-unit layers).
    epochs : int, default=50
        Passes over the training data: the cap with ``early_stopping``.
    batch_size : int, default=256
        Batch size; batches are stratified by (group, label).
    lr : float, default=1e-3
        Adam learning rate.
    early_stopping : bool, default=True
        Hold out a stratified ``validation_fraction`` of the rows (by group x label),
        measure the objective (eq. (1)) on them after each epoch, stop when it has not
        improved by ``tol`` for ``n_iter_no_change`` epochs and keep the flows of its
        best epoch; a ``ConvergenceWarning`` when ``epochs`` comes first. The flows
        otherwise overfit wide data (``otfair/estimators/preprocessing/
        _adapfair_training.py``, docs/adapfair.md). ``False``: exactly ``epochs`` on
        every row, the paper's protocol (the lab's AdapFair methods).
    validation_fraction : float, default=0.1
        Share of the rows held out by ``early_stopping``.
    n_iter_no_change : int, default=10
        Epochs without an improvement of the held-out objective that end the training.
    tol : float, default=1e-4
        Improvement of the held-out objective that counts.
    random_state : int or None, default=None
        Seed of the flow initialization, masks and batch order.
    device : str or torch.device or None, default=None
        Device of the flows (the classifier stays where it is; tensors move to it).
    verbose : bool, default=False
        Progress bar over epochs (with the epoch's loss).
    {lam}

    Attributes
    ----------
    scorer_ : TorchScorer
        The wrapped classifier.
    flows_ : torch.nn.ModuleList
        ``[T_0, T_1]`` (aware) or ``[T]`` (blind).
    groups_ : numpy.ndarray
        The two sensitive-group values; ``groups_[k]`` uses ``flows_[k]`` in aware mode.
    n_features_in_ : int
        Input dimension.
    history_ : list of dict
        Per epoch: mean ``loss``, ``ce`` and ``fairness`` over the batches, and the
        epoch's wall time ``time_s``.
    n_iter_ : int
        Epochs trained (``epochs`` without ``early_stopping``).
    fit_quality_warning_ : str or None
        The :class:`~otfair.estimators.FitQualityWarning` of the fitted pipeline (None:
        none; not checked, so None, inside :class:`~otfair.estimators.AdapFairClassifier`).
    validation_loss_ : list of float
        ``early_stopping`` only (empty without it): the held-out objective after each
        epoch; the flows are those of its smallest.
    classifier_fingerprint_ : str
        SHA-256 of the classifier's state before (= after) training.

    See Also
    --------
    otfair.estimators.AdapFairClassifier : The base classifier and the flows as one estimator.
    otfair.estimators.TorchScorer
        Wraps a frozen classifier as the scorer the flows train against.
    otfair.estimators.as_torch_classifier
        Turns a scikit-learn or otfair classifier into a torch module.

    {references_adapfair}

    Examples
    --------
    >>> import numpy as np, torch
    >>> from otfair.estimators import AdapFairPreprocessor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)).astype("float32"); s = (X[:, 0] > 0).astype(int)
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> f = torch.nn.Linear(3, 1)
    >>> pre = AdapFairPreprocessor(f, epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> pre.predict_proba(X, sensitive_features=s).shape
    (200, 2)
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "classifier": "no_validation",  # any classifier: as_torch_classifier checks it
        "output": [StrOptions({"logits", "probability"})],
        "mode": [StrOptions(set(_MODES))],
        "notion": [StrOptions({"dp", "eopp", "eo"}), Notion],
        "strength": [Interval(numbers.Real, 0, 1, closed="both")],
        "lam": [Interval(numbers.Real, 0, 1, closed="both"), DEPRECATED],
        "distance": [StrOptions(set(DISTANCES)), callable],
        "sinkhorn_eps": [positive_real()],
        "n_blocks": [positive_int()],
        "hidden": [Widths()],
        **TRAINING_CONSTRAINTS,
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_iter_no_change": [positive_int()],
        "tol": [positive_real()],
        "verbose": ["verbose"],
    }

    classifier: Any = None

    # ------------------------------------------------------------------ validation
    def _check_scores(self, scorer: TorchScorer, X: torch.Tensor) -> None:
        """One no-grad pass: output shape, probability range, feature dimension."""
        with torch.no_grad():
            try:
                raw = scorer.raw(X)
            except RuntimeError as exc:  # typically a shape mismatch deep inside torch
                raise ValueError(
                    f"`classifier` failed on `X` of shape {tuple(X.shape)}; does its input "
                    f"dimension match X's {X.shape[1]} features? ({exc})"
                ) from exc
        if not torch.isfinite(raw).all():
            raise ValueError("`classifier` returned NaN or infinite scores on `X`.")
        if scorer.output == "probability" and (raw.min() < 0 or raw.max() > 1):
            raise ValueError(
                "`classifier` output is not a probability: values in "
                f"[{raw.min().item():.4g}, {raw.max().item():.4g}] with output='probability'. "
                "Pass output='logits' if the classifier returns logits."
            )

    def _group_codes(self, sensitive_features: Any, n: int) -> np.ndarray:
        if sensitive_features is None:
            raise ValueError(
                "`sensitive_features` is required in mode='aware' (use mode='blind' to "
                "predict without the sensitive attribute)."
            )
        values = np.asarray(sensitive_features)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1 or values.shape[0] != n:
            raise ValueError(f"`sensitive_features` must have shape ({n},); got {values.shape}.")
        codes = np.searchsorted(self.groups_, values)
        codes = np.clip(codes, 0, len(self.groups_) - 1)
        unseen = self.groups_[codes] != values
        if np.any(unseen):
            raise ValueError(
                f"`sensitive_features` contains groups not seen in fit: "
                f"{np.unique(values[unseen])[:5].tolist()} (fit groups: {self.groups_.tolist()})."
            )
        return codes

    #: the name the fit's warnings give (AdapFairClassifier's, when it fits its flows)
    _owner = "AdapFairPreprocessor"

    def __sklearn_clone__(self) -> AdapFairPreprocessor:
        """Clone the settings, keeping the frozen ``classifier`` itself (never refit)."""
        twin = super().__sklearn_clone__()
        twin.classifier = self.classifier
        return twin

    # ------------------------------------------------------------------ training
    @fits_in_training_state
    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> AdapFairPreprocessor:
        """Learn the flows with the classifier frozen.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Features (the classifier's inputs, without the sensitive attribute).
        y : array-like of shape (n,)
            Labels of two classes (any two values; ``classes_[1]``, the larger, is the
            positive class of the notion's label cells).
        sensitive_features : array-like of shape (n,)
            Binary sensitive attribute (any two values); needed for the fairness term in
            both modes.

        Returns
        -------
        self
        """
        weight = float(renamed_param(self, "lam", "strength", default=0.5))
        scorer = as_torch_classifier(self.classifier, self.output)
        X_np, y_np, codes = self._check_fit_data(X, y, sensitive_features, scorer.n_features)
        raw_scale = warn_feature_scale(X_np, self._owner)
        device = resolve_device(self.device)
        seed, rng = fit_generators(self.random_state)
        mask_seed = int(rng.integers(2**31))
        self.scorer_ = scorer
        self.flows_ = self._build_flows(X_np.shape[1], seed, mask_seed).to(device)
        self.n_features_in_ = X_np.shape[1]
        fingerprint = state_fingerprint(scorer)
        with frozen(scorer):
            self.history_ = self._train_flows(weight, X_np, y_np, codes, rng, device)
        self.n_iter_ = len(self.history_)
        if state_fingerprint(scorer) != fingerprint:  # pragma: no cover - a guard
            raise RuntimeError("The classifier's parameters changed during fit.")
        self.classifier_fingerprint_ = fingerprint
        self.fit_quality_warning_ = None
        if self._owner == type(self).__name__:  # AdapFairClassifier checks its whole fit
            check_preprocessed_fit(self, X_np, y_np, codes, strength=weight, raw_scale=raw_scale)
        return self

    def _check_fit_data(
        self, X: Any, y: Any, sensitive_features: Any, n_features: int | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``X``, label codes and group codes; set ``groups_`` and ``classes_``.

        Every group needs a sample in each label cell of the notion.
        """
        validate_data(self, X, skip_check_array=True)  # its feature names, if a frame
        X_np = check_features(X, "X", n_features)
        y_np = self._encode_labels(y)
        check_consistent_length(X=X_np, y=y_np, sensitive_features=sensitive_features)
        codes, groups = encode_groups(sensitive_features, "sensitive_features")
        if len(groups) != 2:
            raise ValueError(
                f"`sensitive_features` must be binary; found {len(groups)} groups "
                f"({groups.tolist()[:5]})."
            )
        for label in as_notion(self.notion).label_cells:
            for g in (0, 1):
                mask = codes == g if label is None else (codes == g) & (y_np == label)
                if not mask.any():
                    where = "" if label is None else f" with y={label}"
                    raise ValueError(
                        f"`sensitive_features`: group {groups[g]!r} has no sample{where}; "
                        f"notion={self.notion!r} needs it."
                    )
        self.groups_ = groups
        return X_np, y_np, codes

    def _build_flows(self, dim: int, seed: int, mask_seed: int) -> nn.ModuleList:
        """Return the flows ``[T_0, T_1]`` (aware) or ``[T]``, initialized from ``seed``."""
        n_flows = 2 if self.mode == "aware" else 1
        with use_generator(torch_generator(seed)):  # initial weights
            return nn.ModuleList(
                CouplingFlow(
                    dim,
                    n_blocks=int(self.n_blocks),
                    hidden=tuple(self.hidden),
                    random_state=mask_seed + k,
                )
                for k in range(n_flows)
            )

    def _train_flows(
        self,
        weight: float,
        X_np: np.ndarray,
        y_np: np.ndarray,
        codes: np.ndarray,
        rng: np.random.Generator,
        device: torch.device,
    ) -> list[EpochLogs]:
        """Train ``flows_`` in front of the frozen ``scorer_``; return the epoch logs."""
        scorer = self.scorer_
        X_t = torch.as_tensor(X_np, device=device)
        y_t = torch.as_tensor(y_np, dtype=torch.float32, device=device)
        g_t = torch.as_tensor(codes, device=device)
        optimizer = torch.optim.Adam(self.flows_.parameters(), lr=float(self.lr))
        self._check_scores(scorer, X_t)
        penalty = GroupWassersteinLoss(
            self.notion, distance=self.distance, eps=float(self.sinkhorn_eps)
        )

        def objective(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            xb, yb, gb = X_t[idx], y_t[idx], g_t[idx]
            logits = scorer(self._apply_flows(xb, gb))
            ce = nn.functional.binary_cross_entropy_with_logits(logits, yb)
            fair = penalty(torch.sigmoid(logits), gb, yb)
            return weight * ce + (1.0 - weight) * fair, {"ce": ce, "fairness": fair}

        cells = stratum_codes(codes, y_np)
        rows, stop = held_out_stop(
            self.flows_, lambda idx: objective(idx)[0], cells, self, rng, device
        )

        def step(idx_np: np.ndarray) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
            return (*objective(torch.as_tensor(rows[idx_np], device=device)), 1.0)

        history = train_stratified(
            cells[rows],
            rng,
            step,
            optimizer,
            epochs=int(self.epochs),
            batch_size=int(self.batch_size),
            verbose=bool(self.verbose),
            desc="AdapFair flows",
            stop=stop,
        )
        self.validation_loss_ = [] if stop is None else stop.scores
        if stop is not None:
            stop.restore()  # the best epoch's flows
            if not stop.stopped:
                warn_not_converged(
                    self._owner, "adam", int(self.epochs), float(self.tol), held_out=True
                )
        return history

    # ------------------------------------------------------------------ inference
    def _apply_flows(
        self, x: torch.Tensor, groups: torch.Tensor | None, inverse: bool = False
    ) -> torch.Tensor:
        """Apply ``T_s`` row-wise (aware) or ``T`` (blind)."""

        def run(flow: CouplingFlow, z: torch.Tensor) -> torch.Tensor:
            return (flow.inverse(z) if inverse else flow(z))[0]

        if len(self.flows_) == 1:
            return run(cast(CouplingFlow, self.flows_[0]), x)
        assert groups is not None  # aware: one flow per group, the codes given
        out = torch.empty_like(x)
        for k, flow in enumerate(self.flows_):
            rows = groups == k
            if rows.any():
                out = out.index_put((rows,), run(cast(CouplingFlow, flow), x[rows]))
        return out

    def _transform(self, X: Any, sensitive_features: Any, inverse: bool) -> torch.Tensor:
        check_is_fitted(self, "flows_")
        X_np = check_features(X, "X", self.n_features_in_)
        validate_data(self, X, reset=False, skip_check_array=True)  # names as at fit
        device = next(self.flows_.parameters()).device
        codes = None
        if self.mode == "aware":
            codes = torch.as_tensor(
                self._group_codes(sensitive_features, X_np.shape[0]), device=device
            )
        with torch.no_grad():
            return self._apply_flows(torch.as_tensor(X_np, device=device), codes, inverse)

    def transform(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Return the preprocessed features :math:`T_s(x)`, shape (n, d).

        ``sensitive_features`` is required in aware mode and ignored in blind mode.
        """
        return self._transform(X, sensitive_features, inverse=False).cpu().numpy()

    def inverse_transform(self, Xt: Any, *, sensitive_features: Any = None) -> np.ndarray:
        r"""Map preprocessed features back, :math:`x = T_s^{-1}(\tilde x)` (exact)."""
        return self._transform(Xt, sensitive_features, inverse=True).cpu().numpy()

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Class probabilities of the frozen classifier on :math:`T_s(x)`, shape (n, 2)."""
        xt = self._transform(X, sensitive_features, inverse=False)
        with torch.no_grad(), frozen(self.scorer_):
            p1 = torch.sigmoid(self.scorer_(xt)).double().cpu().numpy()
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Predicted labels of ``classes_`` (threshold 0.5 on the positive-class probability)."""
        proba = self.predict_proba(X, sensitive_features=sensitive_features)
        return self._decode_labels(predict_from_proba(proba[:, 1]))

    def score(self, X: Any, y: Any, *, sensitive_features: Any = None) -> float:
        """Accuracy of :meth:`predict`."""
        pred = self.predict(X, sensitive_features=sensitive_features)
        return float(np.mean(pred == np.asarray(y).reshape(-1)))

    def classifier_proba(self, X: Any) -> np.ndarray:
        """Positive-class probability of the *untouched* classifier, shape (n,)."""
        check_is_fitted(self, "flows_")
        X_np = check_features(X, "X", self.n_features_in_)
        validate_data(self, X, reset=False, skip_check_array=True)  # names as at fit
        with torch.no_grad(), frozen(self.scorer_):
            return torch.sigmoid(self.scorer_(torch.as_tensor(X_np))).double().cpu().numpy()
