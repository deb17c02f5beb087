"""Fixtures: one real Kafka broker and one real local SparkSession for the whole run."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterator

import pytest
from pyspark.sql import DataFrame, Row, SparkSession

import streamctl
from streamctl import kafka
from streamctl.testing import kafka_broker

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

_names = itertools.count()


@pytest.fixture(scope="session")
def broker() -> Iterator[object]:
    # Tests write records with fixed timestamps from 2023: the default 7-day time retention
    # would delete them at the broker's 5-minute retention check, midway through the run.
    with kafka_broker(properties={"log.retention.ms": "-1"}) as b:
        yield b


@pytest.fixture(scope="session")
def servers(broker: object) -> str:
    return broker.bootstrap_servers  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamctl-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.driver.memory", "1g")
    )
    session = streamctl.configure_spark(builder).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def make_stream(spark: SparkSession, servers: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """Creates a fresh topic named after the test; returns its name."""

    def make(partitions: int = 1, suffix: str = "") -> str:
        base = re.sub(r"[^a-zA-Z0-9]", "-", request.node.name)[-80:]
        name = f"{base}-{suffix or 's'}-{next(_names)}"
        kafka.create_stream(spark, servers, name, partitions)
        return name

    return make


def run_available_now(df: DataFrame, checkpoint: str) -> list[Row]:
    """Runs a query with Trigger.AvailableNow and returns the rows of every batch it ran.

    foreachBatch rather than the memory sink: it can resume from a checkpoint.
    """
    rows: list[Row] = []
    q = (
        df.writeStream.foreachBatch(lambda batch, _id: rows.extend(batch.collect()))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return rows
