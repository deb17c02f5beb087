"""Which task reads which stream partition: the SSP -> task mapping a query recorded.

Example::

    import streamctl
    for row in streamctl.describe_tasks(spark, checkpoint="/chk/orders-count"):
        print(row.stream, row.partition, "->", row.task)
"""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import SparkSession

from streamctl import _procedures


class TaskRow(NamedTuple):
    """One SSP read by one task (a broadcast partition has a row per task).

    ``source`` is the streamctl source's index in its query (``"0"`` for the first);
    ``executor`` is where the task runs, when host affinity recorded it (else ``None``).

    Example::

        {(r.stream, r.partition): r.task for r in streamctl.describe_tasks(spark, checkpoint="/chk/orders-count")}
        # {('orders', 0): 'Partition 0', ('orders', 1): 'Partition 1'}
    """

    stream: str
    partition: int
    task: str
    source: str = "0"
    executor: str | None = None


def describe_tasks(
    spark: SparkSession, *, checkpoint: str | None = None, metadata_store_path: str | None = None
) -> list[TaskRow]:
    """The SSP -> task mapping recorded by the query with this checkpoint location (or, when the
    query set ``metadata.store.path``, by that store), sorted by source, stream, partition, task.

    The mapping is written each time a query computes it: at its first batch and whenever a
    stream grows. Fails with a ``StreamctlException`` naming the store when no query has recorded
    one there. Works in a classic session and over Spark Connect (``CALL
    streamctl.system.describe_tasks``).

    Example::

        streamctl.describe_tasks(spark, checkpoint="/chk/orders-count")[0]
        # TaskRow(stream='orders', partition=0, task='Partition 0', source='0', executor=None)
    """
    rows = _procedures.rows(spark, "describe_tasks", checkpoint=checkpoint, metadata_store_path=metadata_store_path)
    return [TaskRow(r.stream, r.partition, r.task, r.source, r.executor) for r in rows]
