"""Chaos: a query's driver SIGKILLed at random moments (while starting and recovering, mid-batch,
between batches) under a live producer, restarted each time on its checkpoint, loses and
duplicates nothing with an idempotent sink."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

from _chaos_job import start_chaos_query

from streamctl_testing import kafka

from conftest import committed_batches, run_job_until

KILLS = 20
PARTITIONS = 3


class _Producer(threading.Thread):
    """Writes numbered records to every partition, about 200 a second, until stopped."""

    def __init__(self, spark, servers: str, stream: str) -> None:
        super().__init__(daemon=True)
        self.spark, self.servers, self.stream = spark, servers, stream
        self.sent = 0
        self.stopped = threading.Event()
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            while not self.stopped.wait(0.1):
                numbers = range(self.sent, self.sent + 20)
                values = [str(i).encode() for i in numbers]
                partitions = [i % PARTITIONS for i in numbers]
                kafka.produce(self.spark, self.servers, self.stream, values, partitions=partitions)
                self.sent += len(values)
        except Exception as e:  # noqa: BLE001 - reported by the test, which fails on it
            self.error = e

    def stop(self) -> int:
        self.stopped.set()
        self.join(60)
        assert self.error is None, f"the producer failed: {self.error}"
        return self.sent


def _planned_batches(checkpoint: Path) -> int:
    offsets = checkpoint / "offsets"
    return len([p for p in offsets.iterdir() if p.name.isdigit()]) if offsets.is_dir() else 0


def test_random_sigkills_of_the_driver_lose_and_duplicate_nothing(spark, servers, make_stream, tmp_path):
    seed = int(os.environ.get("STREAMCTL_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    stream = make_stream(partitions=PARTITIONS)
    checkpoint, output = tmp_path / "cp", tmp_path / "out"
    producer = _Producer(spark, servers, stream)
    producer.start()
    moments: Counter[str] = Counter()
    try:
        for kill in range(KILLS):
            spawned, before = time.monotonic(), committed_batches(checkpoint)
            if rng.random() < 0.3:
                # While the driver starts, recovers its checkpoint or replays the batch it was killed in.
                moment, delay = "starting", rng.uniform(1.0, 12.0)

                def ready(delay: float = delay, spawned: float = spawned) -> bool:
                    return time.monotonic() - spawned >= delay
            else:
                # After it made progress: mid-batch or between batches, at a random point.
                moment, delay, progressed = "running", rng.uniform(0.0, 1.5), []

                def ready(delay: float = delay, before: int = before, progressed: list[float] = progressed) -> bool:
                    if not progressed and committed_batches(checkpoint) > before:
                        progressed.append(time.monotonic())
                    return bool(progressed) and time.monotonic() - progressed[0] >= delay
            run_job_until(
                "_chaos_job.py", [servers, stream, str(checkpoint), str(output)], ready, timeout=180,
                died=f"the query died on its own (seed {seed}, kill {kill})",
                stuck=f"the query made no progress (seed {seed}, kill {kill})", log=tmp_path / f"job-{kill}.log",
            )
            moments[moment] += 1
            # A batch planned (in the offset log) and not committed: the kill came mid-batch.
            if _planned_batches(checkpoint) > committed_batches(checkpoint):
                moments["mid-batch"] += 1
    finally:
        sent = producer.stop()

    # The same query, restarted once more, reads what is left and stops.
    q = start_chaos_query(spark, servers, stream, str(checkpoint), str(output), availableNow=True)
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()

    read = [tuple(r) for f in sorted(Path(output).glob("batch-*.json")) for r in json.loads(f.read_text())]
    by_position = Counter((p, o) for p, o, _ in read)
    heads = kafka.upcoming_offsets(spark, servers, stream)
    context = f"seed {seed}, {dict(moments)} kills, {sent} records, {committed_batches(checkpoint)} batches"
    assert sum(heads.values()) == sent, context
    assert [pos for pos, n in by_position.items() if n > 1] == [], f"duplicated ({context})"
    assert sorted(by_position) == [(p, o) for p in range(PARTITIONS) for o in range(heads[p])], f"lost ({context})"
    assert sorted(int(v) for _, _, v in read) == list(range(sent)), context
    print(f"chaos: {context}")  # shown with pytest -s / -rP
    assert moments["starting"] + moments["running"] == KILLS, context
    assert moments["mid-batch"] > 0, f"no kill came mid-batch ({context})"
