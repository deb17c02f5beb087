"""A query killed with SIGKILL mid-run and restarted reads every record exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _copy_job import start_copy

from streamctl import kafka


def _committed_batches(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.is_dir() else 0


def test_kill_and_restart_neither_loses_nor_duplicates(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=3)
    n = 1500
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(n)], partitions=[i % 3 for i in range(n)])
    checkpoint, output = tmp_path / "cp", tmp_path / "out"

    job = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_copy_job.py")), servers, stream, str(checkpoint), str(output)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while _committed_batches(checkpoint) < 4:
            assert job.poll() is None, "the copy job died on its own"
            assert time.monotonic() < deadline, "the copy job made no progress"
            time.sleep(0.2)
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the Python driver and its Spark JVM, mid-batch
        job.wait()
    done_before = _committed_batches(checkpoint)
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
