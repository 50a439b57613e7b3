"""The solve keywords have one set of defaults: the public signatures show the solvers'."""

import inspect

import pytest
import torch

from otfair.ot import OTFProblem, otf0, otf_dual
from otfair.ot._otf_solver import DUAL_OPTIONS, OTF0_OPTIONS


@pytest.mark.parametrize(("function", "options"), [(otf_dual, DUAL_OPTIONS), (otf0, OTF0_OPTIONS)])
def test_public_defaults_are_the_solvers(function, options):
    params = inspect.signature(function).parameters
    shared = [name for name in params if name in options]
    assert len(shared) >= 7
    for name in shared:
        assert params[name].default == options[name], name
    # every solver keyword but the internal ``trusted`` is public
    assert set(options) - set(shared) <= {"trusted"}


def test_an_unknown_keyword_of_a_problem_method_is_a_type_error():
    h = torch.tensor([0.2, 0.8, 0.5, 0.4], dtype=torch.float64)
    G = torch.tensor([[1.0, -1.0, 1.0, -1.0]], dtype=torch.float64)
    problem = OTFProblem(torch.rand(4, 4, dtype=torch.float64), G)
    with pytest.raises(TypeError, match="tolerance"):
        problem.otf_dual(h, 0.1, tolerance=1e-3)
    with pytest.raises(TypeError, match="tolerance"):
        problem.otf0(h, 0.1, tolerance=1e-3)
