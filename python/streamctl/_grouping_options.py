"""Grouping options of the streamctl source; re-exported by :mod:`streamctl.options`.

Example::

    df = (spark.readStream.format("streamctl")
          .options(**options.source(servers, ["orders", "rates"]))
          .options(**options.grouper("partition"), **options.broadcast("rates"))
          .options(**options.partition_check_interval("30s"))
          .load())
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Literal

from streamctl.errors import StreamctlException

GrouperName = Literal["partition", "ssp", "single"]


def grouper(name: GrouperName) -> dict[str, str]:
    """Selects a built-in grouper: ``"partition"`` (default; SSPs with the same partition number
    form task ``Partition N``), ``"ssp"`` (one task per partition) or ``"single"`` (one task).

    Example::

        options.grouper("ssp")  # {'grouper': 'ssp'}
    """
    return {"grouper": name}


def grouper_class(class_name: str, options: Mapping[str, str] | None = None) -> dict[str, str]:
    """Uses your own ``streamctl.grouper.SystemStreamPartitionGrouper`` (a JVM class on the classpath).
    ``options`` become ``grouper.option.<name>``, which its constructor receives with the query's
    other options.

    Example::

        options.grouper_class("com.example.RegionGrouper", {"regions": "eu,us"})
        # {'grouper.class': 'com.example.RegionGrouper', 'grouper.option.regions': 'eu,us'}
    """
    return {"grouper.class": class_name, **user_class_options("grouper", options)}


def user_class_options(kind: str, options: Mapping[str, str] | None) -> dict[str, str]:
    """``<kind>.option.<name>`` for each option of a user's ``<kind>.class`` (spelled as given: the
    JVM's ``OptionSet`` makes option names case-insensitive)."""
    return {f"{kind}.option.{k}": str(v) for k, v in (options or {}).items()}


def broadcast(*streams: str) -> dict[str, str]:
    """Every task reads every partition of these streams (small reference data, rules).

    Example::

        options.broadcast("rules")  # {'stream.rules.broadcast': 'true'}
    """
    if not streams:
        raise StreamctlException("broadcast: name at least one stream")
    return {f"stream.{s}.broadcast": "true" for s in streams}


def expansion_algorithm(name_or_class: str) -> dict[str, str]:
    """How new partitions of a grown stream map to tasks: ``"modulo"`` (default: partition ``p`` joins
    the task of ``p % initial count``) or the name of a ``PartitionExpansionAlgorithm`` JVM class.

    Example::

        options.expansion_algorithm("modulo")  # {'partition.expansion.algorithm': 'modulo'}
    """
    return {"partition.expansion.algorithm": name_or_class}


def partition_check_interval(interval: str | float | timedelta) -> dict[str, str]:
    """How often a running query asks Kafka whether a stream grew (default ``"10s"``): a string with a
    unit (``"500ms"``, ``"1min"``), seconds as a number, or a ``timedelta``.

    Example::

        options.partition_check_interval(timedelta(seconds=30))  # {'partition.check.interval': '30000ms'}
    """
    if isinstance(interval, str):
        return {"partition.check.interval": interval}
    # A negative one becomes "-5000ms", which the JVM's one duration rule refuses at load().
    seconds = interval.total_seconds() if isinstance(interval, timedelta) else float(interval)
    return {"partition.check.interval": f"{round(seconds * 1000)}ms"}
