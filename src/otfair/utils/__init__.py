"""Shared helpers: input validation, parameter constraints, torch plumbing, randomness."""

from otfair.utils._constraints import (
    DEVICE,
    RANDOM_STATE,
    SENSITIVE_COLUMN,
    STRENGTH_PARAMS,
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    Widths,
    check_params,
    check_values,
    fit_context,
    non_negative_real,
    positive_int,
    positive_real,
    validate_option,
    validate_params,
)
from otfair.utils._init_params import set_params_from_init
from otfair.utils._json import to_jsonable
from otfair.utils._params import check_features, check_positive_int, check_scalar
from otfair.utils._predictions import check_predictions
from otfair.utils._random import (
    draw_seed,
    local_random_state,
    reset_parameters,
    torch_generator,
    use_generator,
)
from otfair.utils._sensitive import SensitiveColumns, split_sensitive
from otfair.utils._sklearn_compat import make_constraint, safe_indexing
from otfair.utils._strength import check_strength, check_strengths
from otfair.utils._torch import as_float_tensor, resolve_device
from otfair.utils._validation import (
    MIN_GROUP_SIZE,
    MIN_TRAIN_GROUP_SIZE,
    check_binary_labels,
    check_consistent_length,
    check_finite_1d,
    check_group_sizes,
    check_probabilities,
    check_sensitive_features,
    encode_groups,
    warn_small_groups,
)

__all__ = [
    "DEVICE",
    "RANDOM_STATE",
    "SENSITIVE_COLUMN",
    "STRENGTH_PARAMS",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "SensitiveColumns",
    "Widths",
    "MIN_GROUP_SIZE",
    "MIN_TRAIN_GROUP_SIZE",
    "as_float_tensor",
    "check_binary_labels",
    "check_consistent_length",
    "check_features",
    "check_finite_1d",
    "check_params",
    "check_group_sizes",
    "check_positive_int",
    "check_predictions",
    "check_probabilities",
    "check_scalar",
    "check_sensitive_features",
    "check_strength",
    "check_strengths",
    "check_values",
    "draw_seed",
    "encode_groups",
    "fit_context",
    "local_random_state",
    "make_constraint",
    "non_negative_real",
    "positive_int",
    "positive_real",
    "reset_parameters",
    "resolve_device",
    "safe_indexing",
    "set_params_from_init",
    "split_sensitive",
    "to_jsonable",
    "torch_generator",
    "use_generator",
    "validate_option",
    "validate_params",
    "warn_small_groups",
]
