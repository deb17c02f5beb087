"""Demo steps of ``python -m streamctl demo``, one module per capability."""

from __future__ import annotations


def say(text: str) -> None:
    """Prints a line of the demo at once (Spark's own output interleaves with it)."""
    print(text, flush=True)
