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

import json

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from streamctl._jvm import jvm

LOCALITY_SCHEMA = StructType(
    [
        StructField("source", StringType(), False),
        StructField("task", StringType(), False),
        StructField("executor_id", StringType(), False),
        StructField("host", StringType(), False),
        StructField("location", StringType(), False),
    ]
)


def describe_locality(
    spark: SparkSession, *, checkpoint: str | None = None, metadata_store_path: str | None = None
) -> DataFrame:
    """The task -> executor assignment of a query's streamctl sources, one row per task.

    ``source`` is the source's index in the query (``0`` for a query with one source) and
    ``location`` is the preferred location Spark was given (``executor_<host>_<id>``). Give
    the query's ``checkpoint`` location, or ``metadata_store_path`` when the query set option
    ``metadata.store.path``. Empty when the query has not planned a batch yet, runs with
    ``host.affinity=false``, or had no executors but the driver (local mode).
    """
    if (checkpoint is None) == (metadata_store_path is None):
        raise ValueError("give exactly one of checkpoint= or metadata_store_path=")
    report = jvm(spark).streamctl.spark.LocalityReport
    text = report.describeCheckpoint(checkpoint) if checkpoint is not None else report.describe(metadata_store_path)
    rows = [(r["source"], r["task"], r["executorId"], r["host"], r["location"]) for r in json.loads(text)]
    return spark.createDataFrame(rows, LOCALITY_SCHEMA)


def live_executors(spark: SparkSession) -> list[tuple[str, str]]:
    """The executors tasks can be placed on now, as ``(executor id, host)``, driver excluded.

    Example::

        streamctl.live_executors(spark)  # [("0", "10.0.0.12"), ("1", "10.0.0.13")]
    """
    return [(e["id"], e["host"]) for e in json.loads(jvm(spark).streamctl.spark.LocalityReport.liveExecutors())]
