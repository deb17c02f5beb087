"""Start child processes that cannot outlive this Python process (Linux).

Internal helper of :mod:`streamctl_testing.broker`.
"""

from __future__ import annotations

import ctypes
import functools
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_PR_SET_PDEATHSIG = 1

# Resolved once here: the preexec hook runs between fork and exec, where loading
# a library (and taking the locks that needs) could deadlock a threaded parent.
_prctl: Callable[..., int] | None = None
if sys.platform.startswith("linux"):
    _prctl = ctypes.CDLL(None, use_errno=True).prctl

_Job = tuple[Callable[[], "subprocess.Popen[Any]"], "Future[subprocess.Popen[Any]]"]
_launcher_lock = threading.Lock()


def _die_with_parent_hook() -> Callable[[], None] | None:
    if _prctl is None:
        return None
    prctl = _prctl
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        # The parent may have died between fork and prctl; nobody would signal us then.
        if os.getppid() != parent:
            # stderr is already the child's own here: say why it never ran.
            os.write(2, b"streamctl_testing: the process starting this one has exited; not starting it\n")
            os._exit(1)

    return hook


@functools.cache
def _launcher() -> queue.SimpleQueue[_Job]:
    jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
    threading.Thread(target=_serve, args=(jobs,), name="streamctl-spawn", daemon=True).start()
    return jobs


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        start, result = jobs.get()
        if not result.set_running_or_notify_cancel():
            continue
        try:
            result.set_result(start())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result.set_exception(exc)


def spawn(args: list[str], **popen_kwargs: Any) -> subprocess.Popen[Any]:
    """Start ``args`` like :class:`subprocess.Popen`, killed by SIGKILL if we die.

    Linux sends PR_SET_PDEATHSIG when the *thread* that forked the child exits,
    not the process. A broker started from a short-lived thread (a test timeout
    thread, a notebook worker) would be killed with it, so every child is forked
    from one daemon thread that lives exactly as long as the process.

    Example::

        >>> proc = spawn(["sleep", "60"])
        >>> proc.kill(); proc.wait()
        -9
    """
    with _launcher_lock:  # functools.cache alone could start two launchers
        jobs = _launcher()
    hook = _die_with_parent_hook()
    result: Future[subprocess.Popen[Any]] = Future()
    # The hook only calls a prctl pointer resolved at import, and getppid:
    # nothing that takes a lock another thread could hold at fork time.
    start = functools.partial(subprocess.Popen, args, preexec_fn=hook, **popen_kwargs)
    jobs.put((start, result))
    return result.result()
