"""A stopped session is silent: the Kafka clients streamctl pools for reuse are closed when the
SparkContext stops, not left to reconnect (and log each failure) until the JVM exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Run in a driver of its own: the tests' shared session must outlive this test.
JOB = """
import json, sys, time
from pyspark.sql import SparkSession
import streamctl

servers, topic = sys.argv[1:3]
spark = streamctl.configure_spark(
    SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
).getOrCreate()
kafka = {"kafka.bootstrap.servers": servers}
spark.createDataFrame([("a",)], ["value"]).write.format("streamctl").options(**kafka).option("topic", topic).save()
read = spark.read.format("streamctl").options(**kafka).option("subscribe", topic).load().count()
jvm = spark._jvm  # the gateway outlives spark.stop(), as in any PySpark program


def pooled():
    threads = [t.getName() for t in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()]
    return {
        "producers": jvm.streamctl.system.ProducerPool.openCount(),
        "consumers": jvm.streamctl.system.ConsumerPool.idleCount(),
        "producerThreads": sum(1 for n in threads if n.startswith("kafka-producer-network-thread")),
    }


before = pooled()
spark.stop()
deadline = time.monotonic() + 30
after = pooled()
while any(after.values()) and time.monotonic() < deadline:
    time.sleep(0.2)
    after = pooled()
print(json.dumps({"read": read, "before": before, "after": after}))
"""


def test_spark_stop_closes_the_pooled_kafka_clients(spark, servers, make_stream, tmp_path):
    topic = make_stream()
    job = tmp_path / "job.py"
    job.write_text(JOB)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(job), servers, topic], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, "\n".join(ln for ln in done.stderr.splitlines() if not ln.startswith("\tat "))[-6000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["read"] == 1
    # The write left a producer and the read a consumer in their pools, as reuse wants.
    assert result["before"]["producers"] >= 1 and result["before"]["consumers"] >= 1, result
    assert result["before"]["producerThreads"] >= 1, result
    assert result["after"] == {"producers": 0, "consumers": 0, "producerThreads": 0}, result
