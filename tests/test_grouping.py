"""Groupers and partition expansion on a real broker: tasks stay stable when a topic grows."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

import streamctl
from streamctl import options
from streamctl_testing import kafka

from conftest import idle_triggers, recreate_stream, run_available_now, wait_for

KEYS = 40


def _produce_keyed(spark: SparkSession, servers: str, stream: str, start: int, n: int) -> Counter[bytes]:
    """Writes records i in [start, start + n) with key ``k{i % KEYS}``; Kafka picks the partition by key hash."""
    keys = [f"k{i % KEYS}".encode() for i in range(start, start + n)]
    kafka.produce(spark, servers, stream, [f"v{i}".encode() for i in range(start, start + n)], keys=keys)
    return Counter(keys)


def _grow(spark: SparkSession, servers: str, stream: str, partitions: int) -> None:
    kafka.grow_stream(spark, servers, stream, partitions)
    wait_for(
        f"{stream} at {partitions} partitions",
        lambda: len(kafka.upcoming_offsets(spark, servers, stream)) >= partitions,
        timeout=30,
    )


def _source(spark: SparkSession, servers: str, streams: list[str], **extra: str):
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, streams, starting_offsets="earliest"))
        .options(**extra)
        .load()
    )


def _check_keys_stay_in_one_task(per_task_key: dict[tuple[str, bytes], int], produced: Counter[bytes]) -> None:
    tasks_of: dict[bytes, set[str]] = defaultdict(set)
    counts: Counter[bytes] = Counter()
    for (task, key), n in per_task_key.items():
        tasks_of[key].add(task)
        counts[key] += n
    assert counts == produced
    assert {k: ts for k, ts in tasks_of.items() if len(ts) > 1} == {}


def test_keyed_count_stays_correct_when_partitions_double_mid_run(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    produced = _produce_keyed(spark, servers, stream, 0, 400)
    per_task_key: Counter[tuple[str, bytes]] = Counter()  # the per-task keyed state
    seen: list[tuple[int, str, int, int]] = []  # (batch, task, partition, offset)

    def count(batch, batch_id: int) -> None:
        for r in batch.select("task", "key", "partition", "offset").collect():
            per_task_key[(r.task, bytes(r.key))] += 1
            seen.append((batch_id, r.task, r.partition, r.offset))

    df = _source(
        spark,
        servers,
        [stream],
        **options.partition_check_interval("200ms"),
        **{"max.records.per.batch": "60"},
    )
    q = (
        df.writeStream.foreachBatch(count)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for("the first records", lambda: seen, q)
        before = kafka.upcoming_offsets(spark, servers, stream)
        _grow(spark, servers, stream, 4)
        produced += _produce_keyed(spark, servers, stream, 400, 400)
        heads = kafka.upcoming_offsets(spark, servers, stream)
        assert heads[2] > 0 and heads[3] > 0, heads
        wait_for("all 800 records", lambda: len(seen) >= 800, q)
        idle_triggers(q)  # anything beyond 800 would be a duplicate
    finally:
        q.stop()

    _check_keys_stay_in_one_task(per_task_key, produced)
    positions = Counter((p, o) for _, _, p, o in seen)
    assert set(positions.values()) == {1}
    for p in range(4):
        assert sorted(o for q_, o in positions if q_ == p) == list(range(heads[p])), f"partition {p}"
    assert {(p, t) for _, t, p, _ in seen} == {
        (0, "Partition 0"),
        (1, "Partition 1"),
        (2, "Partition 0"),
        (3, "Partition 1"),
    }
    # Order: the origin's records from before the growth all came in earlier batches than any new-partition record.
    for new in (2, 3):
        origin = new % 2
        old_batches = [b for b, _, p, o in seen if p == origin and o < before[origin]]
        new_batches = [b for b, _, p, _ in seen if p == new]
        assert max(old_batches) < min(new_batches), (new, max(old_batches), min(new_batches))

    rows = streamctl.describe_tasks(spark, checkpoint=str(tmp_path / "cp"))
    assert [(r.stream, r.partition, r.task, r.source, r.executor) for r in rows] == [
        (stream, p, f"Partition {p % 2}", "0", None) for p in range(4)
    ]


def test_growth_while_stopped_is_picked_up_at_restart_and_a_non_multiple_fails(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [stream], **{"max.records.per.batch": "30"})
    produced = _produce_keyed(spark, servers, stream, 0, 100)
    rows = run_available_now(df, cp)
    _grow(spark, servers, stream, 4)
    produced += _produce_keyed(spark, servers, stream, 100, 100)
    rows += run_available_now(df, cp)

    per_task_key = Counter((r.task, bytes(r.key)) for r in rows)
    _check_keys_stay_in_one_task(per_task_key, produced)
    new_offsets = sorted((r.partition, r.offset) for r in rows if r.partition >= 2)
    assert new_offsets[0] == (2, 0) and (3, 0) in new_offsets

    _grow(spark, servers, stream, 5)
    with pytest.raises(StreamingQueryException) as err:
        run_available_now(df, cp)
    assert f"Stream '{stream}' grew from 4 to 5 partitions" in str(err.value)
    assert "not a multiple of its initial count 2" in str(err.value)


def test_a_shrunk_stream_fails_the_query(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=4)
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [stream])
    kafka.produce(spark, servers, stream, [b"x"], partitions=[3])
    assert len(run_available_now(df, cp)) == 1
    # Kafka cannot remove partitions: a topic shrinks only by being deleted and created again.
    recreate_stream(spark, servers, stream, 2)
    with pytest.raises(StreamingQueryException) as err:
        run_available_now(df, cp)
    assert f"stream '{stream}' was deleted and created again" in str(err.value)
    tolerant = _source(spark, servers, [stream], **{"fail.on.data.loss": "false"})
    with pytest.raises(StreamingQueryException) as err:
        run_available_now(tolerant, cp)
    assert "with 2 partition(s), fewer than the 4 the query reads" in str(err.value)


def test_broadcast_stream_is_read_by_every_task(spark, servers, make_stream, tmp_path):
    main = make_stream(partitions=2, suffix="main")
    rates = make_stream(partitions=1, suffix="rates")
    kafka.produce(spark, servers, main, [b"m0", b"m1"], partitions=[0, 1])
    kafka.produce(spark, servers, rates, [b"r0", b"r1", b"r2"], partitions=[0, 0, 0])
    cp = str(tmp_path / "cp")
    rows = run_available_now(_source(spark, servers, [main, rates], **options.broadcast(rates)), cp)

    assert Counter((r.value, r.task) for r in rows) == Counter(
        {(b"m0", "Partition 0"): 1, (b"m1", "Partition 1"): 1}
        | {(f"r{i}".encode(), f"Partition {t}"): 1 for i in range(3) for t in range(2)}
    )
    described = [(r.stream, r.partition, r.task) for r in streamctl.describe_tasks(spark, checkpoint=cp)]
    assert described == [
        (main, 0, "Partition 0"),
        (main, 1, "Partition 1"),
        (rates, 0, "Partition 0"),
        (rates, 0, "Partition 1"),
    ]
    assert streamctl.describe_tasks(spark, metadata_store_path=f"{cp}/streamctl") == streamctl.describe_tasks(
        spark, checkpoint=cp
    )


@pytest.mark.parametrize(
    ("name", "task_of"),
    [("ssp", lambda s, p: f"SystemStreamPartition [kafka, {s}, {p}]"), ("single", lambda s, p: "Task 0")],
)
def test_built_in_groupers_name_their_tasks(spark, servers, make_stream, tmp_path, name, task_of):
    stream = make_stream(partitions=2)
    kafka.produce(spark, servers, stream, [b"a", b"b"], partitions=[0, 1])
    rows = run_available_now(_source(spark, servers, [stream], **options.grouper(name)), str(tmp_path / "cp"))
    assert sorted((r.partition, r.task) for r in rows) == [(p, task_of(stream, p)) for p in range(2)]


def test_bad_grouping_options_fail_at_load(spark, servers, make_stream, tmp_path):
    with pytest.raises(streamctl.StreamctlException) as err:
        _source(spark, servers, [make_stream()], **options.grouper("bogus"))  # type: ignore[arg-type]
    assert "Option grouper: unknown grouper 'bogus'" in str(err.value)
    with pytest.raises(streamctl.StreamctlException, match=r"^No task mapping in the metadata store"):
        streamctl.describe_tasks(spark, checkpoint=str(tmp_path / "never-ran"))


def test_option_helpers():
    assert options.grouper("ssp") == {"grouper": "ssp"}
    assert options.broadcast("a", "b") == {"stream.a.broadcast": "true", "stream.b.broadcast": "true"}
    assert options.expansion_algorithm("modulo") == {"partition.expansion.algorithm": "modulo"}
    assert options.partition_check_interval(0.5) == {"partition.check.interval": "500ms"}
    assert options.partition_check_interval("1min") == {"partition.check.interval": "1min"}
