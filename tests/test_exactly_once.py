"""A query killed with SIGKILL mid-run and restarted reads every record exactly once."""

from __future__ import annotations

from collections import Counter

import pytest
from _copy_job import start_copy
from pyspark.errors import StreamingQueryException

from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import committed_batches, run_job_until


def test_kill_and_restart_neither_loses_nor_duplicates(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=3)
    n = 1500
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(n)], partitions=[i % 3 for i in range(n)])
    checkpoint, output = tmp_path / "cp", tmp_path / "out"

    # Killed mid-batch: the Python driver and its Spark JVM.
    run_job_until(
        "_copy_job.py",
        [servers, stream, str(checkpoint), str(output)],
        lambda: committed_batches(checkpoint) >= 4,
        timeout=120,
        died="the copy job died on its own",
        stuck="the copy job made no progress",
    )
    done_before = committed_batches(checkpoint)
    assert done_before < n // 50, "killed before it finished"

    q = start_copy(spark, servers, stream, str(checkpoint), str(output), availableNow=True)
    q.awaitTermination(300)
    assert q.exception() is None

    rows = spark.read.parquet(str(output)).collect()
    seen = Counter((r.partition, r.offset) for r in rows)
    assert len(rows) == n
    assert max(seen.values()) == 1
    for p in range(3):
        assert sorted(o for q_, o in seen if q_ == p) == list(range(n // 3))
    assert sorted(int(r.value) for r in rows) == list(range(n))


def test_batch_zero_replay_plans_from_the_same_initial_offset(spark, servers, make_stream, tmp_path):
    """Spark replays an uncommitted batch 0 from initialOffset(); recomputing it after retention
    moved the oldest offset would silently skip records instead of reporting their loss."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(10)])
    checkpoint = tmp_path / "cp"
    source = options.source(servers, [stream], starting_offsets="earliest")
    df = spark.readStream.format("streamctl").options(**source).load()

    def start():
        return (
            df.writeStream.foreachBatch(lambda b, _i: b.count())
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )

    first = start()
    first.awaitTermination(120)
    assert first.exception() is None
    # A crash after batch 0 ([0, 10)) ran but before it was committed; meanwhile retention
    # removed offsets 0..4, and no warm consumer holds them any more.
    (checkpoint / "commits" / "0").unlink()
    kafka.delete_records_before(spark, servers, stream, 0, 5)
    jvm(spark).streamctl.system.ConsumerPool.clear()

    replay = start()
    with pytest.raises(StreamingQueryException) as err:
        replay.awaitTermination(120)
    assert f"stream '{stream}' partition 0 offset 0" in str(err.value)
