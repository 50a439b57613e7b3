r"""The best constant predictor as a floor under a full-batch fit's training objective.

A penalized objective :math:`(1 - a)\,\mathrm{CE} + a R` (or :math:`\mathrm{CE} + a R`)
takes at the best constant predictor (the output bias at the training base rate's
log-odds, every weight of the output layer zero) the value
:math:`(1 - a)\,\mathrm{CE}_0 + a R_0`, with :math:`R_0` the penalty of identical scores,
its minimum (the constant is perfectly fair) and :math:`\mathrm{CE}_0` the least
cross-entropy of any constant. A quasi-Newton fit that stops on the penalty's kinks at a
strength near 1 (Norm at alpha 0.9999 on 5,000 Adult rows: a training cross-entropy more
than 0.05 above the constant's) can end *above* that value: then the constant is both
the better minimizer of the fit's own objective and fair, and the fit returns it (its
:class:`~otfair.estimators.FitQualityWarning` then says that it predicts one class for
every row, and why). The comparison uses the objective the fit minimized, so a fit that
ends below the constant's value is never touched.

FairClassifier applies it to the full-batch objectives (Norm, GapReg, Barycenter,
FairTorch's DP loss), not to OTF's fixed-batch one: OTF's entropic term is not least at
identical scores (at alpha 0.9999 its fit has a lower objective than the constant and a
higher cross-entropy, which the ``FitQualityWarning`` reports), and evaluating the
constant would move the duals its solver carries to a warm-started fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

__all__ = ["keep_constant_if_lower"]


def _constant_state(model: nn.Module, y: np.ndarray) -> dict[str, torch.Tensor]:
    """Return ``model``'s state with the output layer made the best constant predictor."""
    rate = float(np.clip(np.mean(y), 1e-6, 1 - 1e-6))
    state = {name: value.detach().clone() for name, value in model.state_dict().items()}
    last_name = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)][-1]
    prefix = f"{last_name}." if last_name else ""
    state[prefix + "weight"].zero_()
    state[prefix + "bias"].fill_(math.log(rate / (1.0 - rate)))
    return state


def keep_constant_if_lower(
    model: nn.Module, y: np.ndarray, objective_value: Callable[[], float]
) -> bool:
    """Load the best constant predictor into ``model`` if its objective is lower.

    Parameters
    ----------
    model : torch.nn.Module
        The fitted model (logits; its last ``nn.Linear`` is the output layer).
    y : ndarray of shape (n,)
        Training labels, 0/1 (their mean is the constant's rate).
    objective_value : callable
        ``objective_value()`` -> the fit's training objective at ``model``'s current
        parameters.

    Returns
    -------
    bool
        Whether the constant replaced the fit (the module docstring says when).
    """
    fitted = {name: value.detach().clone() for name, value in model.state_dict().items()}
    fitted_value = objective_value()
    model.load_state_dict(_constant_state(model, y))
    constant_value = objective_value()
    if constant_value < fitted_value:
        return True
    model.load_state_dict(fitted)
    return False
