"""Thread counts of small fits: one BLAS thread, and one torch thread, on small inputs.

A fit on small data makes short products between stretches of Python: a second BLAS or
torch thread then spins or waits at every product, billing the process for CPU that
barely shortens the fit, and on a loaded machine its wake-ups slow each small product
many times over (``benchmarks/torch_threads_bench.py``: an MLP's Adam fit on German
took about twice the CPU on two torch threads for no shorter wall time, and several
times the wall time while another process held one of the two cores). Every torch
estimator's ``fit`` holds :func:`one_blas_thread_if_small` with torch's threads
(``fits_in_training_state``, :mod:`otfair.utils._torch`), as do FairnessCV's searches;
the caller's counts come back on exit.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from threadpoolctl import ThreadpoolController

__all__ = ["ONE_BLAS_THREAD_MAX_ENTRIES", "one_blas_thread", "one_blas_thread_if_small"]


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """Return a controller of the loaded BLAS libraries (one scan: it costs ~1 ms)."""
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread(enabled: bool = True, *, torch_threads: bool = False) -> Iterator[None]:
    """Run the block on one BLAS thread (``enabled``), as scikit-learn's KMeans does.

    An L-BFGS evaluation of a small model makes a few BLAS products between stretches
    of Python; OpenBLAS's idle threads spin through those stretches, which on 2 cores
    about doubled the process CPU of a FairnessCV search and slowed its wall time
    (:func:`one_blas_thread_if_small` says where otfair holds it). ``torch_threads``:
    torch's intra-op work too (``torch.set_num_threads(1)``, restored on exit): the
    fixed batches' transport costs, the predictions and the measures of a search, whose
    second thread on 2 cores added CPU to a FairnessCV search on Adult without
    shortening it; the fit is then the same whatever the machine's cores.
    """
    if not enabled:
        yield
        return
    before = torch.get_num_threads()
    with _blas_controller().limit(limits=1, user_api="blas"):
        if torch_threads and before != 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch_threads and before != 1:
                torch.set_num_threads(before)


#: inputs up to this many entries train on one BLAS thread (:func:`one_blas_thread_if_small`;
#: on 2 cores a second thread halves a 16,000 x 80 product but its spinning doubles the
#: CPU of a fit, and it pays off only from ~20M entries: 28 ms -> 19 ms on 200,000 x 100)
ONE_BLAS_THREAD_MAX_ENTRIES = 1 << 22


def one_blas_thread_if_small(
    X: Any, *, torch_threads: bool = False
) -> contextlib.AbstractContextManager[None]:
    """Return :func:`one_blas_thread` for inputs of at most ``ONE_BLAS_THREAD_MAX_ENTRIES``.

    ``X``: the inputs (anything with a ``shape``: an array, a DataFrame, a tensor) or
    their number of entries; without a shape, no limit. A fit, a path and a FairnessCV
    search hold it over all their work, not only over the L-BFGS loop: an idle OpenBLAS
    thread spins for a while after each product, so one multi-threaded product between
    two limited stretches (a digest, a prediction, a fold's measurement) bills the
    process for its spinning through the next stretch. On 2 cores that nearly doubled
    the CPU of a FairnessCV search at the libraries' default thread counts
    (``docs/measurements/fairness_cv_vs_fairlearn_default_threads.md`` measures the
    search with this limit). ``torch_threads``: torch's work on one thread as well
    (every torch estimator's fit and FairnessCV's searches, on small inputs).
    """
    if isinstance(X, int):
        n_entries = X
    else:
        shape = getattr(X, "shape", None)
        if shape is None:
            return contextlib.nullcontext()
        n_entries = int(np.prod([int(k) for k in shape]))
    return one_blas_thread(n_entries <= ONE_BLAS_THREAD_MAX_ENTRIES, torch_threads=torch_threads)
