"""The estimators read a penalty's training plan, never its traits or its name (issue 46).

Everything the training of a penalty needs (its batches, the mixing, whether L-BFGS suits
it, an adversary step) comes from the :class:`~otfair.penalties.TrainingPlan` its penalty
object hands over. This test reads the source of ``otfair/estimators`` so that no trait
read, no comparison with a penalty's name and no import of a classification penalty's
torch class (the matched trainer once imported ``MatchedDemographicParity``) comes back.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import otfair

ESTIMATORS = Path(otfair.__file__).parent / "estimators"

#: the traits the training plan replaced
TRAITS = re.compile(
    r"requires_pairs|requires_binary_groups|has_adversary|keeps_batch_work|default_mixing"
    r"|requires_features|batchable"
)
#: the built-in penalty names and the torch classes of the classification penalties
NAMES = ("otf", "norm", "barycenter", "gapreg", "adv", "ftm", "fairtorch-dp")
NAME_COMPARISON = re.compile(
    r"\.name\s*(==|!=)|(==|!=)\s*\w+\.name\b"
    rf"|(==|!=)\s*[\"']({'|'.join(map(re.escape, NAMES))})[\"']"
    rf"|[\"']({'|'.join(map(re.escape, NAMES))})[\"']\s*(==|!=)"
)
PENALTY_CLASSES = {
    "MatchedDemographicParity",
    "OTFPenalty",
    "NormPenalty",
    "GapPenalty",
    "BarycenterPenalty",
    "AdversaryPenalty",
    "FairTorchDemographicParity",
}


def _lines(pattern: re.Pattern[str]) -> list[str]:
    found = []
    for path in sorted(ESTIMATORS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ESTIMATORS)}:{number}: {line.strip()}")
    return found


def test_the_patterns_find_what_they_look_for():
    # the patterns are live: each matches the code it forbids
    assert TRAITS.search("if penalty.has_adversary:")
    assert NAME_COMPARISON.search('return "otf" if spec.name == "otf" else "convex"')
    assert NAME_COMPARISON.search('if penalty == "ftm":')
    tree = ast.parse("from otfair.penalties import MatchedDemographicParity")
    assert _imported(tree) & PENALTY_CLASSES
    assert not NAME_COMPARISON.search('if solver == "lbfgs":')


def test_estimators_read_no_penalty_trait():
    assert not _lines(TRAITS)


def test_estimators_compare_no_penalty_name():
    assert not _lines(NAME_COMPARISON)


def _imported(tree: ast.AST) -> set[str]:
    return {
        alias.name.rsplit(".", 1)[-1]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def test_estimators_import_no_classification_penalty_class():
    found = {}
    for path in sorted(ESTIMATORS.rglob("*.py")):
        names = _imported(ast.parse(path.read_text(encoding="utf-8"))) & PENALTY_CLASSES
        if names:
            found[str(path.relative_to(ESTIMATORS))] = sorted(names)
    assert not found
