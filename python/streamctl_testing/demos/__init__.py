"""Demo steps of ``python -m streamctl demo``, one module per capability."""

from __future__ import annotations

import time
from collections.abc import Callable


def say(text: str) -> None:
    """Prints a line of the demo at once (Spark's own output interleaves with it)."""
    print(text, flush=True)


class DemoProblem(RuntimeError):
    """What a demo step saw go wrong: the demo stops and ``python -m streamctl demo`` exits 1."""


def problem(text: str) -> DemoProblem:
    """Says ``PROBLEM: text`` and returns the error to raise, so a broken demo cannot pass."""
    say(f"PROBLEM: {text}")
    return DemoProblem(text)


def wait_until(what: str, done: Callable[[], bool], timeout: float) -> None:
    """Polls ``done`` until it is true; raises ``TimeoutError`` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)
