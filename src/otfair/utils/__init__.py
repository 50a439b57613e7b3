"""Shared helpers: input validation and torch plumbing (device, seeding, threads)."""

from otfair.utils._init_params import set_params_from_init
from otfair.utils._params import check_features, check_positive_int, check_scalar
from otfair.utils._sensitive import SensitiveColumns, split_sensitive
from otfair.utils._torch import (
    as_float_tensor,
    draw_seed,
    local_random_state,
    resolve_device,
    seed_everything,
)
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
    "MIN_GROUP_SIZE",
    "MIN_TRAIN_GROUP_SIZE",
    "as_float_tensor",
    "check_binary_labels",
    "check_consistent_length",
    "check_features",
    "check_finite_1d",
    "check_group_sizes",
    "check_positive_int",
    "check_scalar",
    "check_probabilities",
    "check_sensitive_features",
    "draw_seed",
    "encode_groups",
    "local_random_state",
    "resolve_device",
    "seed_everything",
    "set_params_from_init",
    "SensitiveColumns",
    "split_sensitive",
    "warn_small_groups",
]
