"""Bounded memory: the live heap of the JVM that reads (local mode: the executor is the driver)
while one batch drains a backlog far larger than the heap, at two backlog sizes, with no batch
budget (streamctl's max.records.per.batch, the built-in's maxOffsetsPerTrigger unset).

Each source runs in its own JVM with a small heap, so a reader that materialised a partition
would run out of memory instead of reporting a number. Live heap = heap in use right after a
forced full GC (MemoryMXBean.gc(), once a second while the batch runs); in use = sampled every
50 ms, garbage included. The forced GCs slow the run: its seconds are not a throughput figure.
What bounds a reader's memory is what it holds in flight per partition: one poll's records
(max.poll.records) and the consumer's fetch buffers (max.partition.fetch.bytes,
fetch.max.bytes), times the partitions read at once (Spark's cores); both sources run with the
same (tuned) consumer settings here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import TUNED_CONSUMER, describe

HEAP = "768m"


def measure_one(source: str, servers: str, topic: str, workdir: str) -> dict[str, Any]:
    """Runs in a child process: reads the whole topic once in one batch; reports its heap samples."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory_child", source, servers, topic, workdir, HEAP, json.dumps(TUNED_CONSUMER)],
        check=True,
        capture_output=True,
        text=True,
        cwd=str(Path(__file__).resolve().parent.parent),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(
    servers: str, backlogs: list[tuple[str, int]], value_size: int, workdir: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``backlogs``: (topic, records) pairs, already produced."""
    config = {
        "heap": HEAP,
        "spark": "local[2], one JVM per source and backlog",
        "batch_budget": "none (one batch)",
        "consumer": describe(TUNED_CONSUMER),
        "live_heap": "heap used right after MemoryMXBean.gc(), once a second",
        "backlogs": [{"records": n, "value_mb": round(n * value_size / 1e6)} for _, n in backlogs],
    }
    print(
        f"memory: one batch over backlogs of {', '.join(f'{n:,}' for _, n in backlogs)} records of {value_size} B, "
        f"no batch budget, heap {HEAP}, consumer {describe(TUNED_CONSUMER)}; live heap after a forced GC every "
        "second",
        flush=True,
    )
    rows = []
    for topic, records in backlogs:
        for source in ("streamctl", "built-in"):
            r = measure_one(source, servers, topic, workdir)
            if r["rows"] != records:
                raise AssertionError(f"{source} read {r['rows']} of {records} records of {topic}")
            r.update({"source": source, "records": records, "backlog_mb": records * value_size / 1e6})
            rows.append(r)
            print(
                f"  {source}, {r['backlog_mb']:,.0f} MB backlog: live heap max {r['live_heap_max_mb']:.0f} MB "
                f"(median {r['live_heap_median_mb']:.0f}, {r['live_samples']} samples), in use peak "
                f"{r['in_use_peak_mb']:.0f} MB, {r['seconds']:.1f} s",
                flush=True,
            )
    return rows, config
