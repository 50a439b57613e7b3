"""Deprecated private path: the module is ``otfair.estimators.regression.nets``.

Kept (as an alias of the same module object) for the imports of other modules and for
code written before the estimators were grouped by kind (issue 14).
"""

import sys

from otfair.estimators.regression import nets as _module

sys.modules[__name__] = _module
