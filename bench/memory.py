"""Bounded memory: peak heap of the JVM that reads (local mode: the executor is the driver)
while one batch drains a backlog far larger than the heap, max.records.per.batch unset.

Each source runs in its own JVM with a small heap, so a reader that materialised a
partition would run out of memory instead of reporting a number.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.common import table

HEAP = "768m"


def measure_one(source: str, servers: str, topic: str, workdir: str) -> dict[str, float]:
    """Runs in a child process: reads the whole topic once, reports peak heap and elapsed time."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory_child", source, servers, topic, workdir, HEAP],
        check=True, capture_output=True, text=True, cwd=str(Path(__file__).resolve().parent.parent),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(servers: str, topic: str, records: int, value_size: int, workdir: str) -> str:
    backlog_mb = records * value_size / 1e6
    print(f"memory: one batch over a backlog of {records:,} records ({backlog_mb:,.0f} MB of values), "
          f"max.records.per.batch unset, driver/executor heap {HEAP}", flush=True)
    rows = []
    for source in ("streamctl", "built-in"):
        r = measure_one(source, servers, topic, workdir)
        rows.append((source, f"{r['peak_heap_mb']:.0f}", f"{backlog_mb:,.0f}", f"{r['seconds']:.1f}", str(r["rows"])))
        print(f"  {source}: peak heap {r['peak_heap_mb']:.0f} MB", flush=True)
    return table(rows, ("source", "peak heap MB", "backlog MB", "seconds", "rows"))
