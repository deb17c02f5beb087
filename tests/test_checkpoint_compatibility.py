"""A checkpoint written by streamctl at commit 08f2737 (tests/data/checkpoint-08f2737) restarts.

The checkpoint carries every kind of offset state that release wrote (grouping after a
partition growth, bootstrap heads and a time-aligned frontier, control messages, an applied
startpoint, skipped records, topic IDs) and control results its last batch left in the store.
The topics it read are created again on the test broker and filled up to the checkpoint's
positions; their new topic IDs are written into the copy, as the old broker's IDs mean nothing
here. The restarted query must go on exactly from where the checkpoint stands.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pyspark.sql import Row

from streamctl import options
from streamctl_testing import control, kafka

CHECKPOINT = Path(__file__).parent / "data" / "checkpoint-08f2737"
T0 = 1_700_000_000_000  # the record timestamps the checkpoint's query saw
OLD = {"orders": "ckpt-orders", "ref": "ckpt-ref", "mid": "ckpt-mid"}


def _source_offset(path: Path) -> dict:
    """The streamctl offset in one file of a Spark offset log: version, metadata, then one line per source."""
    return json.loads(path.read_text().splitlines()[2])


def _copy(tmp: Path, names: dict[str, str], ids: dict[str, str]) -> Path:
    """The checkpoint under `tmp`, its topics renamed to `names` and their IDs replaced by `ids`."""
    copy = tmp / "checkpoint"
    shutil.copytree(CHECKPOINT, copy, ignore=shutil.ignore_patterns("README.md"))
    for crc in copy.rglob(".*.crc"):  # the files change below; Spark checks a checksum only when it has one
        crc.unlink()
    for f in [p for p in copy.rglob("*") if p.is_file()]:
        text = f.read_text()
        for old, new in ids.items():
            text = text.replace(old, new)
        for key, old in OLD.items():
            text = text.replace(old, names[key])
        f.write_text(text)
    return copy


def test_a_checkpoint_of_the_previous_release_restarts_where_it_stood(spark, servers, make_stream, tmp_path):
    last = _source_offset(CHECKPOINT / "offsets" / "14")
    names = {
        "orders": make_stream(partitions=4, suffix="orders"),
        "ref": make_stream(partitions=1, suffix="ref"),
        "mid": make_stream(partitions=2, suffix="mid"),
    }
    positions = {
        ssp.split("/", 1)[1]: offset for task in last["tasks"].values() for ssp, offset in task.items()
    }  # "ckpt-orders/0" -> 30
    # The partitions hold as many records as the checkpoint had read (never read again), then new ones.
    for key, old in OLD.items():
        for ssp, offset in positions.items():
            stream, partition = ssp.rsplit("/", 1)
            if stream != old:
                continue
            values = [b"old"] * offset
            columns = {"partitions": [int(partition)] * offset, "timestamps": [T0] * offset}
            if key == "mid":
                control.produce_framed(spark, servers, names[key], values, **columns)  # type: ignore[arg-type]
            else:
                kafka.produce(spark, servers, names[key], values, **columns)  # type: ignore[arg-type]
    ids = {last["state"]["streamIds"][old]: kafka.topic_id(spark, servers, names[key]) for key, old in OLD.items()}
    checkpoint = _copy(tmp_path, names, ids)

    kafka.produce(
        spark,
        servers,
        names["orders"],
        [b"new"] * 8,
        partitions=[p for p in range(4) for _ in range(2)],
        timestamps=[T0 + 400 + i for i in range(8)],
    )
    control.produce_framed(spark, servers, names["mid"], [b"m8", b"m9"], partitions=[0, 1], timestamps=[T0 + 401] * 2)

    batches: list[list[Row]] = []
    df = (
        spark.readStream.format("streamctl")
        .options(
            **options.source(
                servers,
                [names["orders"], names["ref"], names["mid"]],
                starting_offsets="earliest",
                max_records_per_batch=10,
                fail_on_data_loss=False,
            )
        )
        .options(**options.intermediate(names["mid"]))
        .options(**options.bootstrap(names["ref"]), **options.broadcast(names["ref"]))
        .options(**options.time_aligned(), **options.partition_check_interval("500ms"))
        .load()
    )
    q = (
        df.writeStream.foreachBatch(lambda b, _i: batches.append(b.collect()))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        q.processAllAvailable()
        rows = [r for b in batches for r in b]
        # Exactly the records after the checkpoint's positions: nothing read again, nothing skipped.
        expected = {(names["orders"], p, positions[f"ckpt-orders/{p}"] + i) for p in range(4) for i in range(2)}
        expected |= {(names["mid"], p, 9) for p in range(2)}
        assert {(r.topic, r.partition, r.offset) for r in rows} == expected
        # The grown partitions stay with the tasks of their origin partitions.
        assert {r.task for r in rows if r.topic == names["orders"] and r.partition in (0, 2)} == {"Partition 0"}
        assert {r.task for r in rows if r.topic == names["orders"] and r.partition in (1, 3)} == {"Partition 1"}
        # p0's end-of-stream came from the offset log, and p1's return (watermark +10) from the
        # control results the last batch left in the store: p1 alone now sets the watermark.
        assert {int(r.watermark.timestamp() * 1000) for r in rows if r.topic == names["mid"]} == {T0 + 10}
        metrics = q.lastProgress["sources"][0]["metrics"]
        assert metrics["recordsSkipped"] == "2", metrics  # the total since the checkpoint began

        # One more end-of-stream completes the count the checkpoint started: 2 of 2 producers.
        control.send_end_of_stream(spark, servers, names["mid"], "p1", 2)
        q.processAllAvailable()
        counts = json.loads(q.lastProgress["sources"][0]["metrics"]["control"])
        assert {ssp: (c["endOfStream"], c["taskCount"]) for ssp, c in counts.items()} == {
            f"{names['mid']}-0": (2, 2),
            f"{names['mid']}-1": (2, 2),
        }
    finally:
        q.stop()
    assert q.exception() is None
