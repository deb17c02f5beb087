"""Stage 1 of a pipeline on a three-broker cluster (replication 3, ``min.insync.replicas=2``) under a
live producer: the leader of an output partition, then (with transactions) the transaction
coordinator of the stage's writers, is SIGKILLed in the middle of a batch and restarted, and then
the whole cluster is down for 20 s. The query goes on through all of it; a plain ``read_committed``
consumer of its intermediate stream sees every record exactly once with the transactional sink,
and every record at least once with the at-least-once sink (docs/exactly-once.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _chaos_job import LiveProducer, start_pipeline_stage
from pyspark.sql.streaming import StreamingQuery

from streamctl_testing import kafka
from streamctl_testing.cluster import KafkaCluster

from conftest import committed_batches, planned_batches, read_committed_numbers

PARTITIONS = 3
OUTAGE_S = 20


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    with KafkaCluster() as c:
        yield c


def _until(what: str, query: StreamingQuery, done: Callable[[], bool], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert query.exception() is None, f"{what}: the query failed: {query.exception()}"
        assert query.isActive, f"{what}: the query stopped"
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.02)


def _in_batch(query: StreamingQuery, checkpoint: Path) -> None:
    """Returns while a batch is planned (its offsets logged) and not committed."""
    _until("a batch in flight", query, lambda: planned_batches(checkpoint) > committed_batches(checkpoint))


def _goes_on(what: str, query: StreamingQuery, checkpoint: Path, batches: int = 3) -> None:
    before = committed_batches(checkpoint)
    _until(what, query, lambda: committed_batches(checkpoint) >= before + batches)


@pytest.mark.parametrize("transactional", [True, False], ids=["transactional", "at-least-once"])
def test_a_stage_rides_out_killed_leaders_a_killed_coordinator_and_a_cluster_outage(
    spark, cluster, tmp_path, transactional
):
    servers = cluster.bootstrap_servers
    stream, mid = f"failures-src-{time.time_ns()}", f"failures-mid-{time.time_ns()}"
    kafka.create_stream(spark, servers, stream, PARTITIONS, replicas=3)
    kafka.create_stream(spark, servers, mid, PARTITIONS, replicas=3)
    checkpoint = tmp_path / "cp"
    producer = LiveProducer(spark, servers, stream, PARTITIONS)
    producer.start()
    stage = start_pipeline_stage(
        spark, servers, stream, str(checkpoint), mid, transactional=transactional, processingTime="200 milliseconds"
    )
    killed: list[str] = []
    try:
        _goes_on("first batches", stage, checkpoint)

        leader = kafka.leaders(spark, servers, mid)[0]
        _in_batch(stage, checkpoint)
        cluster.node(leader).kill()
        killed.append(f"leader {leader}")
        _goes_on(f"batches with the leader of {mid}-0 (node {leader}) down", stage, checkpoint)
        assert kafka.leaders(spark, servers, mid)[0] != leader
        cluster.node(leader).start()
        _goes_on(f"batches after node {leader} came back", stage, checkpoint)

        if transactional:
            coordinators = set(kafka.transaction_coordinators(spark, servers, mid).values())
            assert coordinators, f"no transactional writer of {mid} found"
            coordinator = min(coordinators)
            _in_batch(stage, checkpoint)
            cluster.node(coordinator).kill()
            killed.append(f"coordinator {coordinator}")
            _goes_on(f"batches with transaction coordinator node {coordinator} down", stage, checkpoint)
            cluster.node(coordinator).start()
            _goes_on(f"batches after node {coordinator} came back", stage, checkpoint)

        # Every node down for a while: the producer's and the query's requests wait it out.
        _in_batch(stage, checkpoint)
        for node in (1, 2, 3):
            cluster.node(node).kill()
        killed.append("all")
        deadline = time.monotonic() + OUTAGE_S
        _until("the outage", stage, lambda: time.monotonic() >= deadline, timeout=OUTAGE_S + 5)
        cluster.start()
        _goes_on("batches after the outage", stage, checkpoint)
    finally:
        sent = producer.stop()
    stage.processAllAvailable()
    assert stage.exception() is None, stage.exception()
    stage.stop()

    committed = read_committed_numbers(spark, servers, mid, PARTITIONS)
    context = f"{sent} records, {committed_batches(checkpoint)} batches, killed: {', '.join(killed)}"
    if transactional:
        assert committed == list(range(sent)), f"lost or duplicated ({context})"
    else:
        assert sorted(set(committed)) == list(range(sent)), f"lost ({context})"
    print(f"broker failures ({'transactional' if transactional else 'at-least-once'}): {context}")
