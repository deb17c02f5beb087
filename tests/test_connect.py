"""Spark Connect: a real local Connect server (from the pyspark wheel, with streamctl's jars and
nothing streamctl-specific set server-side) and a client process that runs a streamctl query and
every public helper through ``SparkSession.builder.remote``; each helper returns what it returns
in the classic session, and errors arrive as ``StreamctlException`` with the JVM's message."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

import streamctl
from streamctl import _jars, options
from streamctl_testing import connect_server, kafka
from streamctl_testing.connect_server import SparkConnectServer

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def connect_url() -> Iterator[str]:
    missing = connect_server.unavailable()
    if missing:
        pytest.skip(missing)
    with SparkConnectServer() as server:
        yield server.url


def _entries(entries) -> list[list]:
    return [[e.stream, e.partition, e.task, e.description, e.offset] for e in entries]


_PROCEDURES = _jars.has(_jars.PROCEDURES, pyspark.__version__)


@pytest.mark.skipif(not _PROCEDURES, reason=f"Spark {pyspark.__version__} has no DataSource V2 procedures")
def test_every_helper_works_over_spark_connect_as_in_a_classic_session(
    spark, servers, make_stream, connect_url, tmp_path
):
    src, mid = make_stream(partitions=2, suffix="src"), make_stream(partitions=2, suffix="mid")
    kafka.produce(spark, servers, src, [f"r{i}".encode() for i in range(10)], partitions=[i % 2 for i in range(10)])
    # An assignment as host affinity records it on a cluster (local mode has no executors to assign).
    store = tmp_path / "locality-store"
    (store / "locality").mkdir(parents=True)
    (store / "locality" / "assignment-0.json").write_text(
        json.dumps({"version": 1, "placement": {"Partition 0": {"id": "1", "host": "h1"}}, "homes": {}})
    )

    job = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("_connect_job.py")), connect_url, servers, src, mid,
         str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr[-4000:]
    remote = json.loads(job.stdout.strip().splitlines()[-1])

    assert remote["stopped"] and remote["downstream_stopped"]
    written = [v[1:] for p in (0, 1) for v in kafka.read_raw(spark, servers, mid, p) if v[:1] == b"\x00"]
    assert sorted(written) == sorted(f"r{i}".encode() for i in range(10))
    # The downstream's windows on the upstream watermark counted every record, on the plan a classic session builds.
    assert remote["downstream_counted"] == 10
    events = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid]))
        .options(**options.intermediate(mid))
        .load()
        .select("timestamp", "watermark")
    )
    assert remote["upstream_watermark_schema"] == streamctl.with_upstream_watermark(events, "timestamp").schema.json()

    cp = str(tmp_path / "cp")
    assert remote["tasks"] == [list(t) for t in streamctl.describe_tasks(spark, checkpoint=cp)]
    assert [t[:3] for t in remote["tasks"]] == [[src, 0, "Partition 0"], [src, 1, "Partition 1"]]
    assert remote["live_executors"] == [list(e) for e in streamctl.live_executors(spark)]
    locality = [list(r) for r in streamctl.describe_locality(spark, metadata_store_path=str(store)).collect()]
    assert remote["locality"] == locality == [["0", "Partition 0", "1", "h1", "executor_h1_1"]]

    manager = streamctl.StartpointManager(spark, checkpoint=cp, bootstrap_servers=servers)
    assert remote["location"] == manager.location
    assert remote["preview"] == _entries(manager.preview(src, None, streamctl.Startpoint.oldest()))
    assert [e[:2] + e[4:] for e in remote["preview"]] == [[src, 0, 0], [src, 1, 0]]
    assert remote["set"] == _entries(manager.set(src, 0, streamctl.Startpoint.specific(2)))
    assert remote["get"] == ["specific", 2]
    assert remote["list"] == _entries(manager.list())
    assert remote["deleted"] == _entries(manager.delete(src))
    assert remote["list_after_delete"] == [] == manager.list()

    errors = remote["errors"]
    assert errors["describe_tasks"][0].startswith("No task mapping in the metadata store at ")
    assert "offset 1000000000" in errors["set_beyond_end"][0]
    assert errors["bad_source_option"][0].startswith("Unknown option 'max.record.per.batch'")
    assert all(condition.startswith("STREAMCTL_") for _, condition in errors.values())


# A Connect client of a Spark without procedures: a helper refuses before asking the server.
_HELPER_ON_CONNECT = """
import sys
from pyspark.sql import SparkSession
import streamctl
from streamctl._jars import SparkLineError
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
try:
    streamctl.describe_tasks(spark, checkpoint=sys.argv[2])
except SparkLineError as e:
    print(e)
"""


@pytest.mark.skipif(_PROCEDURES, reason="this Spark has DataSource V2 procedures: every helper runs over Connect")
def test_a_helper_over_spark_connect_without_procedures_is_refused_naming_the_spark_and_the_helper(
    connect_url, tmp_path
):
    job = subprocess.run(
        [sys.executable, "-c", _HELPER_ON_CONNECT, connect_url, str(tmp_path / "cp")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr[-4000:]
    assert job.stdout.strip() == (
        f"Spark {pyspark.__version__} cannot run {_jars.PROCEDURES}: it needs Spark 4.0 or later (describe_tasks: "
        f"use a classic SparkSession, where the helpers work on Spark {_jars.line(pyspark.__version__)})"
    )
