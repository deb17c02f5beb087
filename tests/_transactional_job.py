"""A transactional copy whose first attempt of one Spark task fails after writing (used by test_transactions).

Local mode retries a failed Spark task only with a maxFailures of its own (``local[2,3]``), which
the tests' shared session does not have: hence a job of its own. Prints how many attempts failed.
"""

from __future__ import annotations

import sys
import time

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

import streamctl
from streamctl import options


def fail_first_attempt(value: str) -> str:
    # Partition 0's first attempt fails at its last row (598). Pickled Python UDFs evaluate 100 rows at a
    # time, so by then its writer has the first 200 rows; the pause lets the producer send them to
    # the broker in the open transaction, as a task failing later in a long batch would have.
    context = TaskContext.get()
    if context is not None and context.partitionId() == 0 and context.attemptNumber() == 0 and value == "598":
        time.sleep(2)
        raise RuntimeError("the first attempt fails")
    return value


if __name__ == "__main__":
    servers, source, out, checkpoint = sys.argv[1:5]
    spark = streamctl.configure_spark(
        SparkSession.builder.master("local[2,3]").config("spark.ui.enabled", "false")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [source], starting_offsets="earliest"))
        .load()
        .select(F.udf(fail_first_attempt, StringType(), useArrow=False)(F.col("value").cast("string")).alias("value"))
    )
    q = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, out, transactional=True))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(240)
    assert q.exception() is None, q.exception()
    # Spark runs a query's jobs in the job group of its run id.
    tracker = spark.sparkContext.statusTracker()
    stages = [s for j in tracker.getJobIdsForGroup(str(q.runId)) for s in tracker.getJobInfo(j).stageIds]
    print(f"attempts failed once: {sum(tracker.getStageInfo(s).numFailedTasks for s in stages)}")
    spark.stop()
