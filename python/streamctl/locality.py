"""Host affinity from Python: where each task is assigned, and which executors there are.

Example::

    import streamctl
    streamctl.describe_locality(spark, checkpoint="/chk/orders-copy").show()
    # +------+-----------+-----------+---------+--------------------+
    # |source|       task|executor_id|     host|            location|
    # +------+-----------+-----------+---------+--------------------+
    # |     0|Partition 0|          1|10.0.0.12|executor_10.0.0.12_1|
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from streamctl import _procedures


def describe_locality(
    spark: SparkSession, *, checkpoint: str | None = None, metadata_store_path: str | None = None
) -> DataFrame:
    """The task -> executor assignment of a query's streamctl sources, one row per task.

    ``source`` is the source's index in the query (``0`` for a query with one source) and
    ``location`` is the preferred location Spark was given (``executor_<host>_<id>``). Give
    the query's ``checkpoint`` location, or ``metadata_store_path`` when the query set option
    ``metadata.store.path``. Empty when the query has not planned a batch yet, runs with
    ``host.affinity=false``, or had no executors but the driver (local mode). Works in a classic
    session and over Spark Connect (``CALL streamctl.system.describe_locality``).

    Example::

        streamctl.describe_locality(spark, checkpoint="/chk/orders-copy").select("task", "host").show()
    """
    return _procedures.call(spark, "describe_locality", checkpoint=checkpoint, metadata_store_path=metadata_store_path)


def live_executors(spark: SparkSession) -> list[tuple[str, str]]:
    """The executors tasks can be placed on now, as ``(executor id, host)``, driver excluded.

    Example::

        streamctl.live_executors(spark)  # [("0", "10.0.0.12"), ("1", "10.0.0.13")]
    """
    return [(r.id, r.host) for r in _procedures.rows(spark, "live_executors")]
