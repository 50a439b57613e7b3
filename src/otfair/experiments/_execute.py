"""Execute one run in the current process: the unit both the runner and stacked groups use.

:func:`execute_run` never raises for a failing run (the record says what failed);
:func:`single_thread` keeps one BLAS/torch thread per process, since a sweep's workers share
the machine's cores. Kept apart from the runner and the backends so that neither imports
the other through the stacked-group executor (:mod:`otfair.experiments._stacking`).
"""

from __future__ import annotations

import socket
import time
import traceback
from collections.abc import Sequence
from typing import Any

from otfair.experiments._spec import RunConfig, import_plugins


def single_thread() -> None:
    """Use one BLAS/torch thread (several workers share the machine's cores)."""
    import os

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import torch

    torch.set_num_threads(1)


def execute_run(config: RunConfig, plugins: Sequence[str] = ()) -> dict[str, Any]:
    """Run one configuration and return a record for :meth:`ResultStore.write`.

    Never raises for a failing run: the record then has ``status="error"``, the error
    message and the formatted traceback.
    """
    from otfair.experiments._single import run_single

    started = time.time()
    record: dict[str, Any] = {"host": socket.gethostname(), "started_at": started}
    try:
        single_thread()
        import_plugins(plugins)
        result = run_single(**config.run_kwargs())
    except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded
        record.update(
            status="error",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
        )
    else:
        record.update(status="ok", result=result)
    record["finished_at"] = time.time()
    return record
