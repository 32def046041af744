"""Where points run: a local process pool (default) or Ray tasks (a local Ray instance or an
existing cluster). Both call the same `run_point_task` and hand each finished point to the
driver's callback, so the rows do not depend on the engine; only their order does."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rnn2dfa.errors import InputError, first_line
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
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def capped_workers(asked: int | None) -> int:
    """The workers a sweep on this machine runs: `asked`, at most the cores this process may
    use (more processes than cores only share them, each holding its own torch and network:
    more memory, no more speed), and all those cores when not given."""
    cores = default_workers()
    return cores if asked is None else max(1, min(asked, cores))


def _lost(task: Task, why: str) -> PointOutcome:
    point, methods = task
    return PointOutcome(point, [failed_row(point, m, why) for m in methods])


#: Set in a worker while it runs a point: a SIGTERM then unwinds the point (its temporary
#: folder removed) before the worker exits; between points it exits at once.
_in_task = False
#: How often a worker checks that its driver is still there (where prctl cannot tell it).
PARENT_POLL_SECONDS = 1.0
#: Seconds a terminated worker has to unwind its point before it is killed (by the driver)
#: or exits hard (an orphan).
STOP_GRACE_SECONDS = 5.0


class _Terminated(BaseException):
    """Raised in a worker by SIGTERM or SIGHUP during a point (never caught as an Exception)."""


_terminating = False


def _on_term(signum: int, frame: object) -> None:
    """A worker's SIGTERM / SIGHUP: unwind the point in progress, or exit now between points
    (a second signal while unwinding is ignored, so the clean-up runs to its end)."""
    global _terminating
    if _terminating:
        return
    _terminating = True
    if _in_task:
        raise _Terminated(signum)
    os._exit(128 + signum)


def _die_with(driver: int) -> None:
    """End this worker when the driver process ends, however it ends (SIGKILL included): on
    Linux the kernel sends SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG); everywhere
    a daemon thread also checks the parent's pid every PARENT_POLL_SECONDS, sends SIGTERM
    itself when it changed, and exits hard if the point has not unwound STOP_GRACE_SECONDS
    later (a point stuck in native code)."""
    import signal
    import sys
    import threading

    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):  # no libc at hand: the thread below still works
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != driver:  # the driver died before prctl took effect
        os._exit(128 + int(signal.SIGTERM))

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(PARENT_POLL_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(STOP_GRACE_SECONDS)
        os._exit(128 + int(signal.SIGTERM))

    threading.Thread(target=watch, name="rnn2dfa-driver-watch", daemon=True).start()


def _init_worker(driver: int) -> None:
    """A pool worker's start: Ctrl-C ignored (it reaches the whole process group; the driver
    alone handles it and stops the workers), SIGTERM / SIGHUP end it (the start-up handlers of
    the command line, which the spawned worker inherits by importing it, would print a line
    each), and it ends with the driver; torch on one thread."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _on_term)
    _die_with(driver)
    import torch

    torch.set_num_threads(1)


def _run_task(point_fn: PointFn, point: Point, methods: list[str],
              settings: Settings) -> PointOutcome:
    """What a pool worker runs for a task: `point_fn`, marked as in progress for `_on_term`."""
    global _in_task
    _in_task = True
    try:
        return point_fn(point, methods, settings)
    except _Terminated as exc:  # the point unwound (temporary files removed): end now
        os._exit(128 + int(exc.args[0]))
    finally:
        _in_task = False


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (not after their points): SIGTERM,
    then SIGKILL for any still there after STOP_GRACE_SECONDS."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)


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
                                                     initializer=_init_worker,
                                                     initargs=(os.getpid(),)) as pool:
            running: dict[Any, Task] = {}
            try:
                while todo or running:
                    while todo and len(running) < workers:
                        task = todo.pop()
                        fut = pool.submit(_run_task, point_fn, task[0], task[1], settings)
                        running[fut] = task
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
        raise InputError(f"a Ray cluster address must be HOST:PORT or ray://HOST:PORT (got "
                         f"{address!r})", param="ray_address")
    try:
        with socket.create_connection((host, int(port)), timeout=RAY_CONNECT_TIMEOUT) as conn:
            grpc = _speaks_grpc(conn)
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: "
                         f"{exc.strerror or exc}") from None
    if not grpc:
        raise InputError(f"{address} answers, but not as a Ray head (Ray speaks gRPC there; "
                         "this does not): check the host and port (a head's GCS port is "
                         "6379 by default, Ray Client's ray:// port 10001)",
                         param="ray_address")


#: HTTP/2's connection preface and an empty SETTINGS frame: what a gRPC client sends first.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _speaks_grpc(conn: socket.socket) -> bool:
    """Whether the server on `conn` answers HTTP/2's preface with a SETTINGS frame, as every
    gRPC server (a Ray head's GCS, Ray Client) does at once; anything else (an HTTP/1 or SSH
    server, silence until the timeout) is no Ray head, and ray.init would hang or fail."""
    try:
        conn.settimeout(RAY_CONNECT_TIMEOUT)
        conn.sendall(_H2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = conn.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except OSError:
        return False
    return head[3] == 4  # the frame's type: SETTINGS


def check_ray(address: str | None = None) -> None:
    """Fail early, in one line, when Ray is missing or the cluster does not answer."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise InputError("the Ray engine needs Ray: pip install 'rnn2dfa[ray]'",
                         param="engine") from None
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
    with _keep_signal_handlers():
        if address:
            try:
                ray.init(address=address, **quiet)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                raise InputError(f"cannot connect to the Ray cluster at {address}: "
                                 f"{first_line(exc, 200)}",
                                 param="ray_address") from None
        else:
            short = _short_temp_dir()
            extra = {"_temp_dir": short} if short else {}
            ray.init(num_cpus=workers, include_dashboard=False,
                     object_store_memory=RAY_OBJECT_STORE_BYTES, **quiet, **extra)
    return True


#: Ray's local instance puts UNIX sockets about 80 characters below the temporary folder
#: (ray/session_<date>_<pid>/sockets/plasma_store), and a socket path holds at most 107.
RAY_SOCKET_SUFFIX = 80


def _short_temp_dir() -> str | None:
    """A short folder for a local Ray instance when the temporary folder's path is too long
    for its sockets (a long TMPDIR: CI runners, pytest's folders); None when it fits."""
    import tempfile

    if len(tempfile.gettempdir()) + RAY_SOCKET_SUFFIX <= 107 or not os.path.isdir("/tmp"):
        return None
    short = f"/tmp/rnn2dfa-ray-{os.getuid()}"
    os.makedirs(short, mode=0o700, exist_ok=True)
    return short


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Stop Ray tasks: interrupted first (their points unwind, temporary folders removed),
    killed if still running STOP_GRACE_SECONDS later."""
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=False)
    with contextlib.suppress(Exception):
        _, refs = ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_SECONDS)
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)


@contextlib.contextmanager
def _keep_signal_handlers() -> Iterator[None]:
    """Put back the handlers of SIGTERM, SIGHUP and SIGINT after the block: ray.init installs
    a native failure handler for SIGTERM that prints a stack and aborts (exit 134), where the
    command line's handler stops the tasks and shuts the local instance down (exit 143)."""
    import signal

    names = ("SIGTERM", "SIGHUP", "SIGINT")
    saved = {getattr(signal, n): signal.getsignal(getattr(signal, n))
             for n in names if hasattr(signal, n)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                with contextlib.suppress(ValueError):  # not the main thread
                    signal.signal(sig, handler)


@contextlib.contextmanager
def _remembering_interrupts(raised: list[BaseException]) -> Iterator[None]:
    """Within the block, what the Python handlers of SIGTERM and SIGHUP raise is also
    appended to `raised`; the handlers are put back after it (`_keep_signal_handlers`)."""
    import signal

    def noting(handler: Any) -> Callable[[int, Any], None]:
        def wrapped(signum: int, frame: Any) -> None:
            try:
                handler(signum, frame)
            except BaseException as exc:
                raised.append(exc)
                raise

        return wrapped

    with _keep_signal_handlers():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            handler = signal.getsignal(sig) if sig is not None else None
            if callable(handler):
                with contextlib.suppress(ValueError):  # not the main thread: nothing to wrap
                    signal.signal(sig, noting(handler))
        yield


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
    raised: list[BaseException] = []
    try:
        with _remembering_interrupts(raised):
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
            except BaseException as exc:
                _cancel(ray, list(pending))
                if started:  # now: a plain KeyboardInterrupt may be swapped below
                    started = False
                    with contextlib.suppress(Exception):
                        ray.shutdown()
                # ray.wait answers any interrupt with a plain KeyboardInterrupt: raise the
                # one the handler raised (SIGTERM's gives its own exit status)
                if isinstance(exc, KeyboardInterrupt) and raised and exc is not raised[-1]:
                    raise raised[-1] from None
                raise
    finally:
        if started:
            ray.shutdown()
