"""Where points run: a local process pool (default) or Ray tasks (a local Ray instance or an
existing cluster). Both call the same `run_point_task` and hand each finished point to the
driver's callback, so the rows do not depend on the engine; only their order does."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.sweep.grid import Point, Settings
from rnn2dfa.sweep.point import PointOutcome, describe, failed_row, run_point_task

#: (point, the methods still to run on it)
Task = tuple[Point, list[str]]
OnOutcome = Callable[[PointOutcome], None]
#: What a worker runs for one task: run_point_task, or a module-level function like it.
PointFn = Callable[[Point, list[str], Settings], PointOutcome]

#: Object store of a Ray instance started here: points return a few KB each, and Ray's
#: default (30% of the machine's memory, in /dev/shm) is far too much on a shared machine.
RAY_OBJECT_STORE_BYTES = 256 * 1024**2
RAY_CONNECT_TIMEOUT = 10.0
DIED = "a worker process of the pool died (killed, or out of memory?) while this point ran"


def default_workers() -> int:
    """The cores this process may use (the machine's cores, less any affinity mask)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _lost(task: Task, why: str) -> PointOutcome:
    point, methods = task
    return PointOutcome(point, [failed_row(point, m, why) for m in methods])


def _init_worker() -> None:
    import signal

    import torch

    # Ctrl-C reaches the whole process group: the driver alone handles it (it stops the
    # workers), instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (not after their points)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()


def run_pool(tasks: list[Task], settings: Settings, workers: int, on_outcome: OnOutcome,
             point_fn: PointFn = run_point_task) -> None:
    """Run the tasks on `workers` local processes (spawned: torch does not survive fork()
    well once its thread pools exist), each on one torch thread. At most `workers` points
    are in flight, so an interrupted sweep loses at most those. A worker that dies (killed,
    out of memory) fails the points in flight, and a fresh pool runs the rest."""
    todo = list(reversed(tasks))
    ctx = multiprocessing.get_context("spawn")
    while todo:
        with _one_thread_env(), ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                                     initializer=_init_worker) as pool:
            running: dict[Any, Task] = {}
            try:
                while todo or running:
                    while todo and len(running) < workers:
                        task = todo.pop()
                        running[pool.submit(point_fn, task[0], task[1], settings)] = task
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    broken = False
                    for fut in finished:
                        task = running.pop(fut)
                        try:
                            outcome = fut.result()
                        except BrokenProcessPool:
                            broken = True
                            outcome = _lost(task, DIED)
                        except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
                            outcome = _lost(task, f"the point could not run: {describe(exc)}")
                        on_outcome(outcome)
                    if broken:  # the pool ends all its workers: the points in flight too
                        for fut, task in running.items():
                            try:
                                on_outcome(fut.result(timeout=0))  # it finished just before
                            except Exception:  # noqa: BLE001
                                on_outcome(_lost(task, DIED))
                        running.clear()
                        break
            except BaseException:
                _stop(pool)
                raise


@contextlib.contextmanager
def _one_thread_env() -> Iterator[None]:
    """Child processes start with OpenMP/MKL on one thread (torch reads these at import)."""
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
    before = {n: os.environ.get(n) for n in names}
    os.environ.update(dict.fromkeys(names, "1"))
    try:
        yield
    finally:
        for n, v in before.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def _check_reachable(address: str) -> None:
    """Fail in seconds, in one line, when a cluster address does not answer (ray.init would
    retry for a minute or more)."""
    if address == "auto":  # a cluster started on this machine with `ray start`
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray-address must be HOST:PORT or ray://HOST:PORT (got {address!r})")
    try:
        with socket.create_connection((host, int(port)), timeout=RAY_CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: "
                         f"{exc.strerror or exc}") from None


def check_ray(address: str | None = None) -> None:
    """Fail early, in one line, when Ray is missing or the cluster does not answer."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise InputError("--ray needs Ray: pip install 'rnn2dfa[ray]'") from None
    if address:
        _check_reachable(address)


def start_ray(workers: int, address: str | None = None) -> bool:
    """Connect to a cluster (`address`) or start a quiet local instance with `workers` CPUs.
    Returns whether this call started it (the caller then shuts it down)."""
    check_ray(address)
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage-stats banner or upload
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR,
             "configure_logging": True}
    if address:
        ray.init(address=address, **quiet)
    else:
        ray.init(num_cpus=workers, include_dashboard=False,
                 object_store_memory=RAY_OBJECT_STORE_BYTES, **quiet)
    return True


def run_ray(tasks: list[Task], settings: Settings, workers: int, on_outcome: OnOutcome,
            address: str | None = None, point_fn: PointFn = run_point_task) -> None:
    """Run each point as a Ray task (one CPU each). With no address a local instance with
    `workers` CPUs is started, and shut down at the end; an instance already initialised in
    this process (ray.init by the caller) is used as it is and left running."""
    if not tasks:
        return
    started = start_ray(workers, address)
    import ray

    pending: dict[Any, Task] = {}
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(point_fn)
        pending = {remote.remote(p, m, settings): (p, m) for p, m in tasks}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - the worker or its node died
                    outcome = _lost(task, f"the Ray task failed: {describe(exc)}")
                on_outcome(outcome)
    except BaseException:
        for ref in list(pending):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
