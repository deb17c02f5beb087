"""Queries stop at end-of-stream with no setting the user could forget: the first streamctl source
or sink of a session registers streamctl's query listener, exactly once, also beside one that
``spark.sql.streaming.streamingQueryListeners`` registered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import streamctl
from streamctl import options
from streamctl_testing import control

from conftest import streamctl_listeners

pytestmark = pytest.mark.smoke


def _ended_stream(spark: SparkSession, servers: str, make_stream) -> str:
    mid = make_stream(partitions=2)
    control.produce_framed(spark, servers, mid, [b"a", b"b", b"c"], partitions=[0, 1, 0])
    control.send_end_of_stream(spark, servers, mid, "upstream", 1)
    return mid


def test_without_any_setting_a_query_stops_at_end_of_stream(spark, servers, make_stream, tmp_path):
    # The test session comes from configure_spark, which registers no listener.
    assert streamctl.LISTENER_CLASS not in spark.conf.get("spark.sql.streaming.streamingQueryListeners", "")
    mid = _ended_stream(spark, servers, make_stream)
    for run in range(2):
        df = (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [mid], starting_offsets="earliest"))
            .options(**options.intermediate(mid))
            .load()
        )
        q = (
            df.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / f"cp{run}"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        assert q.awaitTermination(120), "the query did not stop by itself at end-of-stream"
        assert q.exception() is None
        assert streamctl_listeners(spark) == 1


def test_a_listener_from_the_session_settings_is_not_doubled(spark, servers, make_stream, tmp_path):
    mid = _ended_stream(spark, servers, make_stream)
    job = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("_listener_job.py")), servers, mid, str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr[-3000:]
    assert json.loads(job.stdout.strip().splitlines()[-1]) == {"stopped": [True, True], "listeners": 1}
