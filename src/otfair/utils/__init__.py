"""Shared helpers: input validation, parameter constraints, torch plumbing, randomness."""

from otfair.utils._constraints import (
    DEVICE,
    RANDOM_STATE,
    SENSITIVE_COLUMN,
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    Widths,
    check_params,
    fit_context,
    non_negative_real,
    positive_int,
    positive_real,
    validate_option,
)
from otfair.utils._init_params import set_params_from_init
from otfair.utils._params import check_features, check_positive_int, check_scalar
from otfair.utils._random import (
    draw_seed,
    local_random_state,
    reset_parameters,
    torch_generator,
    use_generator,
)
from otfair.utils._sensitive import SensitiveColumns, split_sensitive
from otfair.utils._torch import as_float_tensor, resolve_device
from otfair.utils._validation import (
    check_binary_labels,
    check_consistent_length,
    check_finite_1d,
    check_probabilities,
    check_sensitive_features,
    encode_groups,
)

__all__ = [
    "DEVICE",
    "RANDOM_STATE",
    "SENSITIVE_COLUMN",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "SensitiveColumns",
    "Widths",
    "as_float_tensor",
    "check_binary_labels",
    "check_consistent_length",
    "check_features",
    "check_finite_1d",
    "check_params",
    "check_positive_int",
    "check_probabilities",
    "check_scalar",
    "check_sensitive_features",
    "draw_seed",
    "encode_groups",
    "fit_context",
    "local_random_state",
    "non_negative_real",
    "positive_int",
    "positive_real",
    "reset_parameters",
    "resolve_device",
    "set_params_from_init",
    "split_sensitive",
    "torch_generator",
    "use_generator",
    "validate_option",
]
