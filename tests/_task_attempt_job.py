"""A copy of a stream through the streamctl sink whose Spark task attempts misbehave on purpose
(used by test_transactions): the faults come from streamctl.testing.TaskAttemptFaults, SQL
functions evaluated row by row in the stage that writes.

    _task_attempt_job.py retry SERVERS SOURCE OUT CHECKPOINT SINK
        attempt 0 of partition 0 fails after its writer committed; Spark retries it (local[2,4]).
        Prints "failed attempts: N".
    _task_attempt_job.py speculation SERVERS SOURCE OUT CHECKPOINT SINK WORKDIR
        attempt 0 of partition 0 stalls halfway; Spark speculates it on another executor. Spark
        runs a speculative attempt only on another host than the running one, so the job starts
        a standalone cluster of its own, one worker on 127.0.0.1 and one on 127.0.0.2. Prints
        "speculative attempts: started S, succeeded T".
    _task_attempt_job.py stall SERVERS SOURCE OUT CHECKPOINT SINK
        attempt 0 of partition 0 stalls halfway for ten minutes: a run for the test to kill.
    _task_attempt_job.py moves SERVERS SOURCE OUT CHECKPOINT SINK
        no fault: two executors (local-cluster), host affinity keeping each of the two source
        tasks on one of them; the job writes rounds of records to source partition 1 alone and to
        both in turn. Writer partition 0 is the first task with records, so it runs on one
        executor, then the other, then the first again. The source must be empty; prints
        "failed attempts: N", "writer partitions back on an executor: R" and "written: W" (the
        values 0..W-1).

SINK is "transactional" or "plain". The source's partition 0 must hold the value "300" (the test
writes 0..599 round robin over two partitions), where the stall begins.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

import streamctl_testing
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

FAULTS = {
    "retry": "fail_after_commit(CAST(value AS STRING), 0)",
    "speculation": "stall_first_attempt(CAST(value AS STRING), 0, '300', 120000)",
    "stall": "stall_first_attempt(CAST(value AS STRING), 0, '300', 600000)",
    "moves": "CAST(value AS STRING)",
}


def _standalone_cluster(workdir: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A master and two one-core workers on two loopback addresses: two hosts, as Spark sees them."""
    home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(home, "bin", "spark-class")
    processes = []
    log_path = workdir / "cluster.log"
    log = log_path.open("ab")
    env = {**os.environ, "SPARK_HOME": home}
    # Port 0, and the URL read from the master's log: a port picked here could be taken by another
    # process of the run before the master binds it, and Spark would quietly bind the next one up.
    processes.append(
        subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                *("--port", "0"),
                *("--webui-port", "0"),
            ],
            env={**env, "SPARK_LOCAL_IP": "127.0.0.1"},
            stdout=log,
            stderr=log,
        )
    )
    deadline = time.monotonic() + 180
    while not (started := re.search(rb"Starting Spark master at (spark://\S+)", log_path.read_bytes())):
        assert processes[0].poll() is None, f"the Spark master ended:\n{cluster_log(workdir)}"
        assert time.monotonic() < deadline, f"the Spark master gave no URL in 180 s:\n{cluster_log(workdir)}"
        time.sleep(0.2)
    master = started.group(1).decode()
    for host in ("127.0.0.1", "127.0.0.2"):
        work = workdir / f"worker-{host}"
        work.mkdir(parents=True, exist_ok=True)
        processes.append(
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    *("--host", host, "--webui-port", "0"),
                    *("--cores", "1", "--memory", "1g", "--work-dir", str(work), master),
                ],
                env={**env, "SPARK_LOCAL_IP": host},
                stdout=log,
                stderr=log,
            )
        )
    return master, processes


def cluster_log(workdir: Path) -> str:
    """The tail of what the standalone master and workers logged."""
    return (workdir / "cluster.log").read_text(errors="replace")[-3000:]


def _rounds(spark: SparkSession, servers: str, source: str, q: StreamingQuery) -> int:
    """Writes ten records to partition 1 alone and to each partition in turn, five rounds, each read
    before the next is written; returns how many values (0..n-1) it wrote."""
    n = 0
    for partitions in ([1], [0, 1]) * 2 + ([1],):
        values = list(range(n, n + 10 * len(partitions)))
        kafka.produce(
            spark,
            servers,
            source,
            [str(v).encode() for v in values],
            partitions=[partitions[v % len(partitions)] for v in values],
        )
        n += len(values)
        q.processAllAvailable()
    return n


def _session(mode: str, master: str) -> SparkSession:
    builder = SparkSession.builder.master(master).config("spark.ui.enabled", "false")
    if mode == "moves":
        # A busy machine can hold an executor for seconds: the source tasks wait for theirs.
        builder = builder.config("spark.locality.wait", "10s")
    if mode == "speculation":
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.executor.memory", "512m")
            .config("spark.executor.cores", "1")
            .config("spark.cores.max", "2")
            .config("spark.locality.wait", "0")
            .config("spark.speculation", "true")
            .config("spark.speculation.interval", "100ms")
            .config("spark.speculation.quantile", "0.5")
            .config("spark.speculation.multiplier", "1.5")
            .config("spark.speculation.minTaskRuntime", "1s")
            # Speculate by run time alone: the stalled attempt is slow, not short of input.
            .config("spark.speculation.efficiency.enabled", "false")
        )
    spark = streamctl_testing.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    mode, servers, source, out, checkpoint, sink = sys.argv[1:7]
    processes: list[subprocess.Popen[bytes]] = []
    master = {"retry": "local[2,4]", "moves": "local-cluster[2,1,1024]"}.get(mode, "local[2]")
    if mode == "speculation":
        master, processes = _standalone_cluster(Path(sys.argv[7]))
    try:
        spark = _session(mode, master)
        j = jvm(spark)
        j.streamctl.testing.TaskAttemptFaults.register(spark._jsparkSession)  # noqa: SLF001
        speculative = j.streamctl.testing.SpeculativeAttempts()
        spark.sparkContext._jsc.sc().addSparkListener(speculative)  # noqa: SLF001
        placements = j.streamctl.testing.WriterPlacements()
        spark.sparkContext._jsc.sc().addSparkListener(placements)  # noqa: SLF001
        if mode in ("speculation", "moves"):
            tracker = spark.sparkContext._jsc.sc().statusTracker()  # noqa: SLF001
            deadline = time.monotonic() + 240
            while len(tracker.getExecutorInfos()) < 3:  # the driver and two executors
                assert time.monotonic() < deadline, "the cluster started no two executors:\n" + (
                    cluster_log(Path(sys.argv[7])) if mode == "speculation" else ""
                )
                time.sleep(0.5)
        df = (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [source], starting_offsets="earliest"))
            .load()
            .selectExpr(f"{FAULTS[mode]} AS value")
        )
        writer = (
            df.writeStream.format("streamctl")
            .options(**options.sink(servers, out, transactional=sink == "transactional"))
            .option("checkpointLocation", checkpoint)
        )
        if mode == "moves":
            q = writer.start()
            print(f"written: {_rounds(spark, servers, source, q)}")
            q.stop()
        else:
            q = writer.trigger(availableNow=True).start()
        q.awaitTermination(600)
        assert q.exception() is None, q.exception()
        # Spark runs a query's jobs in the job group of its run id.
        status = spark.sparkContext.statusTracker()
        stages = [s for j in status.getJobIdsForGroup(str(q.runId)) for s in status.getJobInfo(j).stageIds]
        print(f"failed attempts: {sum(status.getStageInfo(s).numFailedTasks for s in stages)}")
        print(f"speculative attempts: started {speculative.started()}, succeeded {speculative.succeeded()}")
        print(f"writer partitions back on an executor: {placements.returns()}")
        spark.stop()
    finally:
        for p in processes:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
