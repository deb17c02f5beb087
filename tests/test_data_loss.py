"""Nothing is lost silently: recreated topics, retention gaps and a damaged task mapping all say what happened."""

from __future__ import annotations

import json
import re
import time
from collections import Counter

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import Row

from streamctl import options
from streamctl_testing import control, kafka
from streamctl_testing._jvm import jvm

from conftest import control_metrics, driver_log, read_intermediate, recreate_stream, run_available_now


def _source(spark, servers, stream, **extra):
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .options(**extra)
        .load()
    )


def _run(df, checkpoint, on_batch=None) -> tuple[list[Row], list[dict]]:
    """Runs an AvailableNow query; returns its rows and the source metrics of every progress."""
    rows: list[Row] = []

    def batch(b, i):
        rows.extend(b.collect() if on_batch is None else on_batch(b, i))

    q = df.writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    assert q.awaitTermination(180), "the AvailableNow run did not finish"
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return rows, [p["sources"][0]["metrics"] for p in q.recentProgress]


def _values(n: int, prefix: str) -> list[bytes]:
    return [f"{prefix}{i}".encode() for i in range(n)]


def test_a_recreated_topic_fails_naming_the_stream_and_both_topic_ids(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    cp = str(tmp_path / "cp")
    kafka.produce(spark, servers, stream, _values(500, "old-"))
    assert len(run_available_now(_source(spark, servers, stream), cp)) == 500
    # Deleted and created again with more records than the checkpoint read: offsets 500.. exist
    # in the new topic, so without topic IDs a restart would read 500..799 and skip 0..499.
    recreate_stream(spark, servers, stream, 1)
    kafka.produce(spark, servers, stream, _values(800, "new-"))

    with pytest.raises(StreamingQueryException) as err:
        run_available_now(_source(spark, servers, stream), cp)
    message = str(err.value)
    recreated = rf"stream '{re.escape(stream)}' was deleted and created again \(Kafka topic ID (\S+), now (\S+)\)"
    ids = re.search(recreated, message)
    assert ids is not None, message
    assert ids.group(1) != ids.group(2)
    assert "'failOnDataLoss'" in message

    with driver_log(spark) as log:
        rows, progress = _run(_source(spark, servers, stream, **{"fail.on.data.loss": "false"}), cp)
    assert sorted(r.offset for r in rows) == list(range(800))
    assert {bytes(r.value) for r in rows} == set(_values(800, "new-"))
    warned = [line for line in log().splitlines() if "was deleted and created again" in line]
    assert len(warned) == 1 and line_names(warned[0], stream, ids.group(1), ids.group(2)), log()
    assert progress[-1]["streamsRecreated"] == "1"
    assert progress[-1]["recordsSkipped"] == "0"

    # The new ID is recorded: the next run reads on without complaint.
    kafka.produce(spark, servers, stream, _values(5, "more-"))
    assert sorted(r.offset for r in run_available_now(_source(spark, servers, stream), cp)) == list(range(800, 805))


def test_a_shorter_topic_recreated_under_a_running_query_is_told_at_once(spark, servers, make_stream, tmp_path):
    """Between two stream checks, a partition that ends before the query's position makes the
    planner ask Kafka at once, so the recreation is handled in that very batch."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, _values(500, "old-"))
    batches: list[list[bytes]] = []

    def batch(b, _id):
        batches.append([bytes(r.value) for r in b.collect()])
        if len(batches) == 1:  # no planning happens while a batch runs: recreate the topic meanwhile
            recreate_stream(spark, servers, stream, 1)
            kafka.produce(spark, servers, stream, _values(100, "new-"))

    df = _source(spark, servers, stream, **{"fail.on.data.loss": "false", "partition.check.interval": "1h"})
    with driver_log(spark) as log:
        q = df.writeStream.foreachBatch(batch).option("checkpointLocation", str(tmp_path / "cp")).start()
        try:
            deadline = time.monotonic() + 120

            def recreated_in_progress() -> bool:  # a batch's progress is posted after its foreachBatch returns
                progress = q.lastProgress
                return progress is not None and progress["sources"][0]["metrics"].get("streamsRecreated") == "1"

            while sum(len(b) for b in batches) < 600 or not recreated_in_progress():
                assert q.exception() is None, q.exception()
                assert time.monotonic() < deadline, f"read {[len(b) for b in batches]}, progress {q.lastProgress}"
                time.sleep(0.2)
        finally:
            q.stop()
    assert batches[0] == _values(500, "old-")
    assert sorted(v for b in batches[1:] for v in b) == sorted(_values(100, "new-"))
    assert "was deleted and created again" in log() and "fewer records" not in log(), log()


def test_a_checkpoint_from_before_topic_ids_restarts_and_records_them(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    cp = tmp_path / "cp"
    kafka.produce(spark, servers, stream, _values(3, "a-"))
    assert len(run_available_now(_source(spark, servers, stream), str(cp))) == 3
    # Make the checkpoint look as the previous release wrote it: no topic IDs in the offset log.
    for f in (cp / "offsets").iterdir():
        if f.name.startswith("."):
            f.unlink()  # Hadoop's checksum of the file, which the edit would contradict
        else:
            lines = f.read_text().splitlines()
            offset = json.loads(lines[-1])
            offset["state"].pop("streamIds")
            f.write_text("\n".join([*lines[:-1], json.dumps(offset, separators=(",", ":"))]))
    kafka.produce(spark, servers, stream, _values(2, "b-"))
    assert sorted(r.offset for r in run_available_now(_source(spark, servers, stream), str(cp))) == [3, 4]
    last = max(int(p.name) for p in (cp / "offsets").iterdir() if p.name.isdigit())
    assert stream in json.loads((cp / "offsets" / str(last)).read_text().splitlines()[-1])["state"]["streamIds"]


def line_names(line: str, *parts: str) -> bool:
    return line.startswith("WARN ") and all(p in line for p in parts)


def test_records_deleted_by_retention_are_logged_once_and_counted(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    cp = str(tmp_path / "cp")
    kafka.produce(spark, servers, stream, _values(2000, "a-"), partitions=[i % 2 for i in range(2000)])
    df = _source(spark, servers, stream, **{"fail.on.data.loss": "false"})
    assert len(run_available_now(df, cp)) == 2000  # both partitions read up to offset 1000
    kafka.produce(spark, servers, stream, _values(2000, "b-"), partitions=[i % 2 for i in range(2000)])
    kafka.delete_records_before(spark, servers, stream, 0, 1500)
    kafka.delete_records_before(spark, servers, stream, 1, 1200)

    with driver_log(spark) as log:
        rows, progress = _run(df, cp)
    assert Counter(r.partition for r in rows) == {0: 500, 1: 800}
    assert min(r.offset for r in rows if r.partition == 0) == 1500
    assert min(r.offset for r in rows if r.partition == 1) == 1200
    skipped = [line for line in log().splitlines() if "skipped offsets" in line]
    why = "which are no longer on the broker (deleted by retention?), because option 'failOnDataLoss' is false"
    assert sorted(skipped) == [
        f"WARN DataLossChecks stream '{stream}' partition 0: skipped offsets 1000 to 1499 (500 records), {why}",
        f"WARN DataLossChecks stream '{stream}' partition 1: skipped offsets 1000 to 1199 (200 records), {why}",
    ], log()
    assert progress[-1]["recordsSkipped"] == "700"
    # Per partition too (the metrics system's gauge `...partition.<p>.recordsSkipped` is set from it).
    assert json.loads(progress[-1]["recordsSkippedBySsp"]) == {f"{stream}-0": 500, f"{stream}-1": 200}
    # The offset log says so too: what the batch skipped and the running totals.
    last = max(int(p.name) for p in (tmp_path / "cp" / "offsets").iterdir() if p.name.isdigit())
    loss = json.loads((tmp_path / "cp" / "offsets" / str(last)).read_text().splitlines()[-1])["state"]["dataLoss"]
    assert loss["recordsSkipped"] == 700
    assert loss["recordsSkippedBySsp"] == {f"kafka/{stream}": [500, 200]}


def test_an_intermediate_stream_read_on_past_a_retention_gap_still_knows_who_ended(
    spark, servers, make_stream, tmp_path
):
    """A consumer stopped for longer than its intermediate topic's retention skips the gap
    (failOnDataLoss=false) and reads on in the same stream: a producer that ended before the gap is
    still ended, so the other's end-of-stream ends the pipeline (it forgot p0 before)."""
    mid = make_stream()
    control.produce_framed(spark, servers, mid, [b"a0", b"a1"])
    control.send_end_of_stream(spark, servers, mid, "p0", 2)  # offset 2
    df = read_intermediate(spark, servers, mid, {"failOnDataLoss": "false"})
    assert [r.value for r in run_available_now(df, str(tmp_path / "cp"))] == [b"a0", b"a1"]

    control.produce_framed(spark, servers, mid, [f"b{i}".encode() for i in range(5)])  # offsets 3..7
    kafka.delete_records_before(spark, servers, mid, 0, 6)
    control.send_end_of_stream(spark, servers, mid, "p1", 2)
    rows: list[bytes] = []
    q = (
        df.writeStream.foreachBatch(lambda b, _i: rows.extend(r.value for r in b.collect()))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    assert q.awaitTermination(120), "the consumer did not stop at end-of-stream from both producers"
    assert q.exception() is None
    assert rows == [b"b3", b"b4"]
    m = control_metrics([p for p in q.recentProgress if p["sources"][0]["metrics"]][-1])
    assert m["endOfStream"] == "true"
    assert m["control"][f"{mid}-0"]["endOfStream"] == 2


def test_records_deleted_while_a_batch_reads_are_logged_and_counted(spark, servers, make_stream, tmp_path):
    """Retention can run between planning and reading; the reader then skips what is gone and says so."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, _values(20, "x-"))
    seen: list[list[int]] = []

    def read_twice(batch, _id):
        seen.append(sorted(r.offset for r in batch.collect()))
        kafka.delete_records_before(spark, servers, stream, 0, 15)
        jvm(spark).streamctl.system.ConsumerPool.clear()  # as an executor restart would: no warm buffers
        again = batch.collect()  # Spark reads the batch's offsets again for every action
        seen.append(sorted(r.offset for r in again))
        return again

    with driver_log(spark) as log:
        _rows, progress = _run(
            _source(spark, servers, stream, **{"fail.on.data.loss": "false"}), str(tmp_path / "cp"), on_batch=read_twice
        )
    assert seen[:2] == [list(range(20)), list(range(15, 20))]
    warned = [line for line in log().splitlines() if "skipped offsets 0 to 14 (15 records)" in line]
    assert len(warned) == 1 and line_names(warned[0], "KafkaTaskReader", f"stream '{stream}' partition 0"), log()
    assert progress[0]["recordsSkipped"] == "15"
    assert progress[-1]["recordsSkipped"] == "15"
    assert json.loads(progress[-1]["recordsSkippedBySsp"]) == {f"{stream}-0": 15}


def test_a_range_gone_past_a_replayed_batch_is_one_warn(spark, servers, make_stream, tmp_path):
    """A run that failed on gone records (failOnDataLoss=true) left a planned batch; the restart
    with failOnDataLoss=false replays it (its reader skips the batch's share of the range) and
    plans past the rest: one range, one WARN, naming all of it."""
    stream = make_stream()
    cp = str(tmp_path / "cp")
    kafka.produce(spark, servers, stream, _values(1000, "a-"))
    assert len(run_available_now(_source(spark, servers, stream), cp)) == 1000
    kafka.produce(spark, servers, stream, _values(1000, "b-"))
    kafka.delete_records_before(spark, servers, stream, 0, 1500)
    with pytest.raises(StreamingQueryException, match="Records are no longer on the broker"):
        _run(_source(spark, servers, stream, maxOffsetsPerTrigger="100"), cp)

    with driver_log(spark) as log:
        rows, progress = _run(_source(spark, servers, stream, maxOffsetsPerTrigger="100", failOnDataLoss="false"), cp)
    assert sorted(r.offset for r in rows) == list(range(1500, 2000))
    skipped = [line for line in log().splitlines() if "skipped offsets" in line]
    assert len(skipped) == 1, log()
    assert f"stream '{stream}' partition 0: skipped offsets 1000 to 1499 (500 records)" in skipped[0], skipped
    assert progress[-1]["recordsSkipped"] == "500"


def test_a_corrupted_task_mapping_is_rewritten_with_a_warning(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    cp = tmp_path / "cp"
    kafka.produce(spark, servers, stream, _values(4, "a-"), partitions=[0, 1, 0, 1])
    df = _source(spark, servers, stream)
    assert len(run_available_now(df, str(cp))) == 4
    (mapping,) = (cp / "streamctl" / "grouper").glob("mapping-*.json")
    good = json.loads(mapping.read_text())
    mapping.write_text('{"version":1,"tasks":')  # torn by a disk fault

    kafka.produce(spark, servers, stream, _values(2, "b-"), partitions=[0, 1])
    with driver_log(spark) as log:
        rows = run_available_now(df, str(cp))
    assert sorted((r.partition, r.offset) for r in rows) == [(0, 2), (1, 2)]
    warned = [line for line in log().splitlines() if "task mapping" in line]
    assert len(warned) == 1
    assert line_names(warned[0], str(mapping), "cannot be read", "rewritten from the query's offset log"), warned
    assert json.loads(mapping.read_text()) == good
