"""In-band control messages on a real broker: reconciliation, end-of-stream across a restart, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException

import streamctl
from streamctl import control, kafka, options


def _read(spark, servers, stream, **source_opts):
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", **source_opts))
        .options(**options.intermediate(stream))
        .load()
    )


def _control_metrics(progress) -> dict:
    metrics = progress["sources"][0]["metrics"]
    return {
        "watermark": int(metrics["watermark"]) if "watermark" in metrics else None,
        "endOfStream": metrics.get("endOfStream"),
        "control": json.loads(metrics.get("control", "{}")),
    }


def test_watermark_is_the_minimum_over_producers_and_never_moves_back(spark, servers, make_stream, tmp_path):
    mid = make_stream(partitions=2)
    batches: dict[int, list] = {}
    q = (
        _read(spark, servers, mid)
        .writeStream.foreachBatch(lambda b, i: batches.__setitem__(i, b.select("value", "watermark").collect()))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )

    def step(label: str, watermarks: list[tuple[str, int]]) -> tuple[int | None, dict]:
        for producer, ts in watermarks:
            control.send_watermark(spark, servers, mid, producer, 3, ts)
        control.produce_framed(spark, servers, mid, [label.encode()] * 2, partitions=[0, 1])
        q.processAllAvailable()
        rows = [r for b in batches.values() for r in b if r.value == label.encode()]
        assert len(rows) == 2
        marks = {None if r.watermark is None else int(r.watermark.timestamp() * 1000) for r in rows}
        assert len(marks) == 1, marks
        return marks.pop(), _control_metrics(q.lastProgress)

    def ssp_watermarks(m: dict) -> set:
        return {m["control"][f"{mid}-{p}"].get("watermark") for p in (0, 1)}

    try:
        assert step("before", [])[0] is None
        mark, m = step("two-of-three", [("p0", 10), ("p1", 20)])
        assert mark is None, "undefined until all three producers reported"
        assert m["control"][f"{mid}-0"]["producers"] == 2 and m["watermark"] is None
        mark, m = step("all-three", [("p2", 5)])
        assert m["control"][f"{mid}-1"] == {"taskCount": 3, "producers": 3, "endOfStream": 0, "watermark": 5}
        assert m["watermark"] == 5 and mark in (None, 5)
        mark, m = step("p2-at-30", [("p2", 30)])
        assert ssp_watermarks(m) == {10} and m["watermark"] == 10
        # A row sees its own task's SSPs live and the other tasks' as of the batch start.
        assert mark in (5, 10)
        mark, m = step("p0-goes-back", [("p0", 8)])
        assert ssp_watermarks(m) == {10} and mark == 10, "an older watermark is ignored; it never moves back"
        assert m["endOfStream"] == "false"
    finally:
        q.stop()
