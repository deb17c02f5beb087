"""streamctl beside Spark's own Kafka connector: one session, one kafka-clients (the connector's
3.9.2, since ``configure_spark`` sees it on ``spark.jars`` and leaves streamctl's out), and one
query that reads with ``format("kafka")`` and ``format("streamctl")`` and writes with streamctl."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamctl_testing import kafka
from streamctl_testing.spark_kafka import KAFKA_CLIENTS_VERSION

pytestmark = pytest.mark.smoke


def test_one_query_reads_with_spark_kafka_and_streamctl(spark, servers, make_stream, tmp_path):
    by_kafka, by_streamctl, out = (make_stream(suffix=s) for s in ("kafka", "streamctl", "out"))
    kafka.produce(spark, servers, by_kafka, [f"k{i}".encode() for i in range(10)])
    kafka.produce(spark, servers, by_streamctl, [f"s{i}".encode() for i in range(10)])

    job = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("_spark_kafka_job.py")), servers, by_kafka, by_streamctl, out,
         str(tmp_path / "cp")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr[-3000:]
    report = json.loads(job.stdout.strip().splitlines()[-1])

    assert report["kafka_clients"] == KAFKA_CLIENTS_VERSION
    # A checkpoint of format("kafka") restarted with format("streamctl") says what to do instead.
    cp = tmp_path / "cp-moved"
    assert "was written by Spark's Kafka source" in report["moved"] and str(cp) in report["moved"], report
    assert f'({{"{by_kafka}":{{"0":10}}}})' in report["moved"] and "option startingOffsets" in report["moved"]
    clients = [j for j in report["jars"].split(",") if Path(j).name.startswith("kafka-clients-")]
    assert [Path(j).name for j in clients] == [f"kafka-clients-{KAFKA_CLIENTS_VERSION}.jar"]
    written = kafka.read_raw(spark, servers, out, 0)  # plain records: the sink is not intermediate
    assert sorted(written) == sorted([f"k{i}".encode() for i in range(10)] + [f"s{i}".encode() for i in range(10)])
