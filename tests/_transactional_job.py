"""A transactional copy whose first attempt of one Spark task fails after writing (used by test_transactions).

Local mode retries a failed Spark task only with a maxFailures of its own (``local[2,3]``), which
the tests' shared session does not have: hence a job of its own. Prints how many attempts failed,
and whether the failing one failed with its first records in the broker's open transaction.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

import streamctl_testing
from streamctl import options
from streamctl_testing import kafka

PADDING = "x" * 2048


def failing_first_attempt(latch: str):
    def fail_first_attempt(value: str) -> str:
        # Partition 0's first attempt fails at its last row (598). Pickled Python UDFs evaluate 100
        # rows at a time and the worker buffers its output up to 64 KB, so the rows carry 2 KB of
        # padding (stripped in the JVM): by then the worker has handed the first 200 rows to the
        # writer. It fails once the broker holds them in the open transaction (the driver says so
        # through the latch file), as a task failing later in a long batch would have.
        context = TaskContext.get()
        if context is not None and context.partitionId() == 0 and context.attemptNumber() == 0 and value == "598":
            deadline = time.monotonic() + 120
            while not Path(latch).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            # For the driver to tell: an attempt that failed with nothing sent proves little.
            Path(latch + ".failed").write_text(str(Path(latch).exists()))
            raise RuntimeError("the first attempt fails")
        return f"{value} {PADDING}"

    return fail_first_attempt


def open_the_latch_once_sent(spark, servers: str, out: str, latch: Path, at_least: int) -> None:
    """Touches ``latch`` once the broker holds ``at_least`` records of ``out``, committed or not."""
    while not latch.exists():
        if sum(len(kafka.read_raw(spark, servers, out, p)) for p in (0, 1)) >= at_least:
            latch.touch()
        time.sleep(0.1)


if __name__ == "__main__":
    servers, source, out, checkpoint = sys.argv[1:5]
    spark = streamctl_testing.configure_spark(
        SparkSession.builder.master("local[2,3]").config("spark.ui.enabled", "false")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    latch = Path(checkpoint + ".sent")
    # The other task's 300 records and the failing attempt's first 200.
    threading.Thread(target=open_the_latch_once_sent, args=(spark, servers, out, latch, 500), daemon=True).start()
    fail_first_attempt = failing_first_attempt(str(latch))
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [source], starting_offsets="earliest"))
        .load()
        .select(F.udf(fail_first_attempt, StringType(), useArrow=False)(F.col("value").cast("string")).alias("padded"))
        .select(F.substring_index("padded", " ", 1).alias("value"))
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
    print(f"failed once the broker held its records: {Path(str(latch) + '.failed').read_text()}")
    spark.stop()
