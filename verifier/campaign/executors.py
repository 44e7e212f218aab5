"""Executors: where a proof run's work items run, in this process, in a pool of forked worker
processes, or on a Ray cluster, each reported back to the run as it finishes.

A work item is a module-level function and its picklable arguments (:data:`Work`): a task of
:mod:`.proving` (some claims of one construction) or one shard of a large exhaustive claim
(:mod:`netproof.verifier.exhaustive.shards`). The executor only runs them and hands each result,
in the order they finish, to the run's ``report``; what a result means is the run's business,
so that records come back the same whichever executor ran them.

- ``local`` (:func:`run_serial`, :func:`run_pool`): this process, or ``jobs`` forked worker
  processes; on KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one by the command line) or
  an error a work item raised, the items not started are cancelled and the workers stopped.
- ``ray`` (:func:`ray_cluster`, :func:`run_ray`): a Ray cluster (``ray.init(address=...)``;
  without an address a Ray instance on this machine, stopped again when the run ends); one CPU
  per item. Ray is the
  optional extra ``netproof[ray]`` (:func:`require_ray`).

May import the campaign's error module; Ray inside functions.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from .errors import CampaignError

__all__ = [
    "EXECUTORS",
    "TOKEN_AUTH_NOTICE",
    "DropTokenAuthNotice",
    "Work",
    "connect",
    "probe_address",
    "quiet_token_auth_notice",
    "ray_cluster",
    "require_ray",
    "run_pool",
    "run_ray",
    "run_serial",
]

EXECUTORS = ("local", "ray")
"""Where a proof run's work may run: this machine's processes, or a Ray cluster."""

Work = tuple[Callable[..., Any], tuple[Any, ...]]
"""A work item: a module-level function (so that it pickles by name) and its arguments."""


def require_ray() -> Any:
    """The ``ray`` module, or a :class:`CampaignError` that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise CampaignError(
            "executor='ray' needs Ray, which is not installed; install the extra: pip install -e '.[ray]'"
        ) from None
    return ray


def run_serial(
    work: Sequence[Work], schedule: Sequence[int], report: Callable[[int, Any], None]
) -> None:
    """Run the items in this process, in the order of ``schedule``."""
    for i in schedule:
        fn, args = work[i]
        report(i, fn(*args))


def run_pool(
    work: Sequence[Work],
    schedule: Sequence[int],
    workers: int,
    report: Callable[[int, Any], None],
    *,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    poll: Callable[[], None] | None = None,
) -> None:
    """Run the items in ``workers`` forked processes (each set up by ``initializer``), reporting
    each as it finishes; ``poll`` is called a few times a second while they run (to pass on the
    workers' progress). On KeyboardInterrupt (or an error an item raised) the items not started
    are cancelled and the workers stopped before it goes on up."""
    ctx = multiprocessing.get_context("fork")
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=initializer, initargs=initargs
    )
    futures: dict[Future[Any], int] = {}
    try:
        futures.update({pool.submit(work[i][0], *work[i][1]): i for i in schedule})
        pending = set(futures)
        while pending:
            finished, pending = wait(
                pending, timeout=0.1 if poll is not None else None, return_when=FIRST_COMPLETED
            )
            if poll is not None:
                poll()
            for f in finished:
                report(futures[f], f.result())
        if poll is not None:
            poll()
    except BaseException:  # Ctrl-C, SIGTERM, or an error from a worker: stop the others too
        # No future is cancelled: once its workers are stopped the pool marks every unfinished
        # one broken itself, and (Python 3.11) marking a cancelled one raises InvalidStateError
        # in the pool's thread, a traceback before the run's one line.
        stopping = set(multiprocessing.active_children()) - before
        for proc in stopping:
            proc.terminate()
        for proc in stopping:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


def connect(address: str | None) -> bool:
    """Connect this process to Ray: the cluster at ``address``, else a Ray instance on this
    machine (started now, dashboard off); nothing to do where Ray is already initialized.
    Returns whether this call connected (and so should disconnect: ``ray.shutdown()``). The
    SIGTERM handler in place before (the command line's) is kept: ``ray.init`` replaces it."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    if address is not None:
        probe_address(address)
    try:
        if address is None:
            quiet_token_auth_notice()
            ray.init(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        if main and sigterm is not None:
            signal.signal(
                signal.SIGTERM, sigterm
            )  # ray.init sets its own (sys.exit): SIGTERM stays the run's
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CampaignError(
            f"cannot connect to {where}: {first}; start one with `ray start --head` and pass its address "
            "(e.g. --address 127.0.0.1:6379), or leave --address out for a local instance"
        ) from None
    return True


TOKEN_AUTH_NOTICE = "Token authentication is enabled for this Ray cluster."


class DropTokenAuthNotice(logging.Filter):
    """Drops Ray's notice that the local instance it starts uses token authentication (Ray's
    default since 2.5x, printed on every run), and nothing else: the notice that token
    authentication is *disabled*, and every other warning, still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(TOKEN_AUTH_NOTICE)


def quiet_token_auth_notice() -> None:
    """Install :class:`DropTokenAuthNotice` on the logger Ray's notice comes from (once).
    Setting ``RAY_AUTH_MODE=token`` would silence it too, but only if set before Ray is
    imported (the driver reads its mode at import; set later, the cluster's processes
    authenticate and the driver does not)."""
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    if not any(isinstance(f, DropTokenAuthNotice) for f in logger.filters):
        logger.addFilter(DropTokenAuthNotice())


PROBE_SECONDS = 3.0
"""How long :func:`probe_address` waits for a cluster's port to answer."""


def probe_address(address: str) -> None:
    """Refuse (a :class:`CampaignError`, in at most :data:`PROBE_SECONDS`) a cluster address
    ``HOST:PORT`` (or ``ray://HOST:PORT``) where nothing answers: ``ray.init`` would retry for a
    minute or more, printing its connection warnings. ``auto`` and ``local`` are Ray's own."""
    if address in ("auto", "local"):
        return
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CampaignError(
            f"--address {address!r} is not a Ray cluster's address; give HOST:PORT "
            "(e.g. 127.0.0.1:6379, printed by `ray start --head`)"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        why = (
            f"no answer within {PROBE_SECONDS:g} s"
            if isinstance(exc, TimeoutError)
            else exc.strerror or str(exc)
        )
        raise CampaignError(
            f"cannot connect to the Ray cluster at {address!r}: {why}; "
            "start one with `ray start --head` and pass its address (e.g. --address 127.0.0.1:6379), "
            "or leave --address out for a local instance"
        ) from None


@contextlib.contextmanager
def ray_cluster(address: str | None) -> Iterator[int]:
    """Connected to Ray (:func:`connect`) for the duration, with the cluster's CPUs (at least
    1); disconnected at the end if this connected."""
    ray = require_ray()
    ours = connect(address)
    try:
        yield max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if ours:
            ray.shutdown()


def run_ray(
    work: Sequence[Work], schedule: Sequence[int], report: Callable[[int, Any], None]
) -> None:
    """Run the items as Ray tasks (one CPU each) on the cluster this process is connected to
    (:func:`ray_cluster`), reporting each as it finishes. An exception an item raised comes
    back as itself (not wrapped in Ray's error); on KeyboardInterrupt (or such an error) the
    items not finished are cancelled before it goes on up."""
    ray = require_ray()
    remote: dict[Callable[..., Any], Any] = {}
    refs: dict[Any, int] = {}
    pending: list[Any] = []
    try:
        for i in schedule:
            fn, args = work[i]
            if fn not in remote:
                remote[fn] = ray.remote(num_cpus=1, max_retries=0)(fn)
            refs[remote[fn].remote(*args)] = i
        pending = list(refs)
        while pending:
            done, pending = ray.wait(
                pending, num_returns=1, timeout=0.5
            )  # Ctrl-C and SIGTERM are heard between waits
            for ref in done:
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise
                report(refs[ref], result)
    except BaseException:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
