"""Option commitOffsets: a query's positions in its consumer group, as kafka-consumer-groups shows them."""

from __future__ import annotations

import threading
import time

import pytest
from pyspark.sql.streaming import StreamingQueryListener

from streamctl import Startpoint, StartpointManager, StreamctlException, options
from streamctl_testing import kafka

from conftest import driver_log, wait_for


def _committing(spark, servers: str, stream: str, group: str, budget: int):
    """A streamctl source that commits its positions to ``group``, ``budget`` records a batch."""
    opts = options.source(
        servers, [stream], starting_offsets="earliest", max_records_per_batch=budget, kafka={"group.id": group}
    )
    return spark.readStream.format("streamctl").options(**opts).option("commitOffsets", "true").load()


def _run(spark, servers: str, stream: str, group: str, checkpoint: str) -> int:
    """One AvailableNow run of a query that commits its positions to ``group``; the rows it read."""
    read = [0]
    df = _committing(spark, servers, stream, group, 4)
    q = (
        df.writeStream.foreachBatch(lambda b, _i: read.__setitem__(0, read[0] + b.count()))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert q.awaitTermination(120), "the AvailableNow run did not finish"
    assert q.exception() is None
    return read[0]


def _lag_once_committed(servers: str, group: str, current: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """Per partition (CURRENT-OFFSET, LOG-END-OFFSET, LAG) as ``kafka-consumer-groups --describe``
    shows them, once the group's offsets are ``current`` (the commit follows the batch's commit on
    a thread of its own)."""
    deadline = time.monotonic() + 60
    while True:
        shown = kafka.consumer_group_lag(servers, group)
        if {p: c for p, (c, _, _) in shown.items()} == current:
            return shown
        assert time.monotonic() < deadline, f"group {group} shows {shown}, expected offsets {current}"


def test_kafka_consumer_groups_shows_the_query_lag(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    group = f"monitor-{stream}"
    checkpoint = str(tmp_path / "cp")
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(10)], partitions=[i % 2 for i in range(10)])
    assert _run(spark, servers, stream, group, checkpoint) == 10
    assert _lag_once_committed(servers, group, {0: 5, 1: 5}) == {0: (5, 5, 0), 1: (5, 5, 0)}

    # New records, no query running: the tool shows them as the query's lag.
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(6)], partitions=[i % 2 for i in range(6)])
    assert _lag_once_committed(servers, group, {0: 5, 1: 5}) == {0: (5, 8, 3), 1: (5, 8, 3)}

    # A restart reads them; a startpoint moves partition 0 back, and the group follows the query.
    StartpointManager(spark, checkpoint=checkpoint).set(stream, 0, Startpoint.specific(2))
    assert _run(spark, servers, stream, group, checkpoint) == 6 + 3
    assert _lag_once_committed(servers, group, {0: 8, 1: 8}) == {0: (8, 8, 0), 1: (8, 8, 0)}


class _HeldReports(StreamingQueryListener):
    """Holds Spark's listener bus at the first progress report until released: the reports after it
    (the run's last among them) reach streamctl's listener, added before this one, only after the
    query stopped and its sources with it."""

    def __init__(self) -> None:
        self.held = threading.Event()
        self.release = threading.Event()

    # pyspark's method names.
    def onQueryStarted(self, event) -> None:
        pass

    def onQueryProgress(self, event) -> None:
        if not self.held.is_set():
            self.held.set()
            self.release.wait(120)

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        pass


def test_the_last_batch_is_committed_when_its_report_comes_after_the_query_stopped(
    spark, servers, make_stream, tmp_path
):
    stream = make_stream(partitions=2)
    group = f"late-{stream}"
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(10)], partitions=[i % 2 for i in range(10)])
    df = _committing(spark, servers, stream, group, 4)  # registers streamctl's listener first
    held = _HeldReports()
    spark.streams.addListener(held)
    try:
        q = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp"))
        q = q.trigger(availableNow=True).start()
        assert q.awaitTermination(120) and q.exception() is None
        assert len(q.recentProgress) >= 3
        # The first report may reach this listener only after the query stopped (py4j's callback is
        # slow on a busy machine); batches 1 and 2 stay held back behind it either way.
        assert held.held.wait(60), "the first progress report never reached the holding listener"
    finally:
        held.release.set()
        spark.streams.removeListener(held)
    assert _lag_once_committed(servers, group, {0: 5, 1: 5}) == {0: (5, 5, 0), 1: (5, 5, 0)}


def test_commit_offsets_without_a_group_fails_at_start_naming_both_options(spark, servers, make_stream):
    stream = make_stream()
    with pytest.raises(StreamctlException, match=r"Option 'commitOffsets' commits .* 'kafka\.group\.id', which is not"):
        spark.readStream.format("streamctl").options(**options.source(servers, [stream])).option(
            "commitOffsets", "true"
        ).load().writeStream.format("noop").start()


def test_a_batch_read_refuses_commit_offsets(spark, servers, make_stream):
    stream = make_stream()
    with pytest.raises(StreamctlException, match="Option 'commitOffsets' is for streaming queries"):
        spark.read.format("streamctl").options(**options.source(servers, [stream], kafka={"group.id": "g"})).option(
            "commitOffsets", "true"
        ).load().collect()


def test_a_group_with_a_live_member_is_one_warn_per_episode_and_the_query_goes_on(
    spark, servers, make_stream, tmp_path
):
    """Kafka commits for a group only while it has no member: another application consuming with the
    same group id makes every commit fail. The query goes on, says so once, and commits as soon as
    the member left; a later episode says so again."""
    stream = make_stream(partitions=2)
    group = f"busy-{stream}"
    produced = [0]

    def produce(n: int) -> None:
        kafka.produce(spark, servers, stream, [str(i).encode() for i in range(n)], partitions=[i % 2 for i in range(n)])
        produced[0] += n

    def read_all(q) -> None:  # wait for the batches that read everything produced
        deadline = time.monotonic() + 60
        while sum(p["numInputRows"] for p in q.recentProgress) < produced[0]:
            assert q.isActive and time.monotonic() < deadline, f"the query read {q.recentProgress}"
            q.awaitTermination(0.2)

    def warnings(log) -> list[str]:
        return [line for line in log().splitlines() if line.startswith("WARN") and "Could not commit" in line]

    def await_warnings(log, n: int) -> None:  # the commit follows the batch on a thread of its own
        deadline = time.monotonic() + 60
        while len(warnings(log)) < n:
            assert time.monotonic() < deadline, log()
            time.sleep(0.2)

    member = kafka.group_member(spark, servers, stream, group)
    produce(4)
    with driver_log(spark) as log:
        q = (
            _committing(spark, servers, stream, group, 2)
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        try:
            read_all(q)  # two batches, each commit refused
            await_warnings(log, 1)
            produce(2)
            read_all(q)  # refused again, without another WARN
            member.close()
            produce(2)
            read_all(q)
            assert _lag_once_committed(servers, group, {0: 4, 1: 4}) == {0: (4, 4, 0), 1: (4, 4, 0)}
            [warning] = warnings(log)
            assert f"consumer group '{group}'" in warning and "the group has live members" in warning, warning

            # Another member, another episode: one more WARN, and the commits resume once it left.
            member = kafka.group_member(spark, servers, stream, group)
            produce(2)
            read_all(q)
            await_warnings(log, 2)
            member.close()
            produce(2)
            read_all(q)
            assert _lag_once_committed(servers, group, {0: 6, 1: 6}) == {0: (6, 6, 0), 1: (6, 6, 0)}
            assert len(warnings(log)) == 2
            assert q.isActive and q.exception() is None
        finally:
            q.stop()
            member.close()


def _progress_recorders(spark) -> list[str]:
    """The JVM's threads that keep sources' progress reports (and commit them to the group)."""
    threads = spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()  # noqa: SLF001
    return [n for n in (t.getName() for t in threads) if n.startswith("streamctl-progress-")]


def test_with_asynchronous_progress_tracking_the_group_is_never_ahead_of_where_a_restart_resumes(
    spark, servers, make_stream, tmp_path
):
    """Spark's asynchronous progress tracking writes a batch to the checkpoint once per
    ``asyncProgressTrackingCheckpointIntervalMs`` and reports every batch before it is written: the
    group follows what Spark commits of the source (a batch a restart will not read again), never
    the reports."""
    stream = make_stream()
    group = f"monitor-{stream}"
    checkpoint = str(tmp_path / "cp")
    q = (
        _committing(spark, servers, stream, group, 4)
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .option("asyncProgressTrackingEnabled", "true")
        .option("asyncProgressTrackingCheckpointIntervalMs", "600000")  # no batch after the first is logged
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        for read in (4, 8, 12):
            kafka.produce(spark, servers, stream, [b"r"] * 4)
            wait_for(f"{read} records read", lambda r=read: sum(p["numInputRows"] for p in q.recentProgress) >= r, q)
    finally:
        q.stop()
    # The run's last reports are kept (and, before the fix, committed) after it stopped.
    wait_for("the run's progress recorders ended", lambda: not _progress_recorders(spark))
    shown = {p: current for p, (current, _, _) in kafka.consumer_group_lag(servers, group).items()}
    # Where a restart resumes: a run of the same query, logging in line, reads what was not logged.
    resumes_at = 12 - _run(spark, servers, stream, f"{group}-after", checkpoint)
    assert resumes_at < 12, "the interval left batches unlogged"
    # Only batch 0 was logged, and Spark commits a source's batch once a later one is logged: the
    # group shows nothing (before the fix it showed 12, from the reports).
    assert shown == {}, (shown, resumes_at)


def test_with_asynchronous_progress_tracking_the_group_follows_what_spark_commits(
    spark, servers, make_stream, tmp_path
):
    """The other half: with batches logged every few hundred ms, the group does move, to positions
    Spark committed (never past what the query read)."""
    stream = make_stream()
    group = f"monitor-{stream}"
    q = (
        _committing(spark, servers, stream, group, 4)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .option("asyncProgressTrackingEnabled", "true")
        .option("asyncProgressTrackingCheckpointIntervalMs", "300")
        .trigger(processingTime="100 milliseconds")
        .start()
    )

    def committed() -> int:
        return {p: c for p, (c, _, _) in kafka.consumer_group_lag(servers, group).items()}.get(0, 0)

    def read() -> int:
        return sum(p["numInputRows"] for p in q.recentProgress)

    try:
        # Batches come with records; Spark logs one once the interval has passed since the last,
        # and then commits the ones before it: a few rounds of records make that happen.
        for n in range(1, 40):
            kafka.produce(spark, servers, stream, [b"r"] * 4)
            wait_for(f"{4 * n} records read", lambda n=n: read() >= 4 * n, q)
            if committed() > 0:
                break
        wait_for("the group shows a commit", lambda: committed() > 0, q, timeout=60)
        assert committed() <= read()
    finally:
        q.stop()
