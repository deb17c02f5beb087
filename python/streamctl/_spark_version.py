"""The one check of the running pyspark against the Spark versions streamctl supports.

The supported range is declared once, as the wheel's ``pyspark`` extra in pyproject.toml
(``pip install 'streamctl[pyspark]'``); this reads it back from the installed metadata, so the
check and the declaration cannot drift apart. streamctl does not depend on pyspark: a cluster
provides it (or ``pyspark-client`` for Spark Connect), and pip must never replace it.
"""

from __future__ import annotations

import re
from importlib import metadata

_DISTRIBUTION = "streamctl"


def supported_range() -> str | None:
    """The ``pyspark`` extra's version specifier, e.g. ``">=3.5,<4.4"``; None when streamctl is not
    installed as a distribution (a source checkout on ``PYTHONPATH``).

    Example::

        supported_range()   # '<4.4,>=3.5'
    """
    try:
        requirements = metadata.requires(_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return None
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        name = re.match(r"\s*pyspark\b", spec)
        if name and "pyspark" in marker:
            return spec[name.end() :].strip().strip("()").replace(" ", "")
    return None


def check() -> None:
    """Raises ImportError naming both versions when the pyspark found is outside the supported
    range, or when there is none.

    Example::

        check()   # ImportError: streamctl 0.1.0 supports pyspark <4.4,>=3.5; this Python has pyspark 3.4.4 ...
    """
    spec = supported_range()
    try:
        import pyspark
    except ModuleNotFoundError as e:
        if e.name != "pyspark":
            raise
        raise ImportError(
            f"streamctl needs pyspark{spec or ''}, which is not installed: a Spark cluster provides it (or "
            "pyspark-client for Spark Connect); elsewhere, pip install 'streamctl[pyspark]'"
        ) from None
    if spec is None:
        return
    running = pyspark.__version__
    if not satisfies(running, spec):
        raise ImportError(
            f"streamctl {metadata.version(_DISTRIBUTION)} supports pyspark {spec}; this Python has pyspark {running} "
            f"(at {pyspark.__path__[0]}). Use a Spark in that range, or a streamctl built for yours."
        )


def satisfies(version: str, spec: str) -> bool:
    # Hand-written rather than `packaging`: the wheel has no dependency at all, and these specifiers
    # are ours (release numbers and the six comparison operators).
    """Whether ``version`` (e.g. ``"4.3.0"``, ``"4.2.0.dev1"``) meets every clause of ``spec``
    (``"<4.4,>=4.2"``), comparing release numbers.

    Example::

        satisfies("4.3.0", "<4.4,>=4.2")   # True
    """
    have = _release(version)
    compare = {
        ">=": lambda a, b: a >= b,
        ">": lambda a, b: a > b,
        "<=": lambda a, b: a <= b,
        "<": lambda a, b: a < b,
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
    }
    for clause in filter(None, spec.split(",")):
        op, bound = re.fullmatch(r"(>=|<=|==|!=|<|>)(.+)", clause).groups()  # type: ignore[union-attr]
        want = _release(bound)
        width = max(len(have), len(want))
        if not compare[op](have + (0,) * (width - len(have)), want + (0,) * (width - len(want))):
            return False
    return True


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.match(r"\d+(?:\.\d+)*", version).group(0).split("."))  # type: ignore[union-attr]


check()
