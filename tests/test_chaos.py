"""Chaos: a query's driver SIGKILLed at random moments (while starting and recovering, mid-batch,
between batches) under a live producer, restarted each time on its checkpoint, loses and
duplicates nothing with an idempotent sink.

Each kill costs a driver start (~20 s on 2 cores), so the kills are planned rather than many:
a third each while starting, at a random point after progress, and inside a batch (its offsets
logged, its commit not yet), in a random order with random delays."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

from _chaos_job import start_chaos_query, start_transactional_stage

from streamctl import options
from streamctl_testing import kafka

from conftest import committed_batches, run_job_until

# Kills per moment of the plain query (docs/exactly-once.md reports a longer run); each costs a
# driver start, and CI's two cores share them with the rest of the suite.
KILLS_PER_MOMENT = int(os.environ.get("STREAMCTL_CHAOS_KILLS_PER_MOMENT", "2"))
MOMENTS = ("starting", "running", "in a batch")
PARTITIONS = 3
# Kills of the transactional stage: each costs a driver start, and they share CI's time budget.
TRANSACTIONAL_KILLS = int(os.environ.get("STREAMCTL_CHAOS_TRANSACTIONAL_KILLS", "6"))


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


def _kill_repeatedly(
    rng: random.Random, kills: int, args: list[str], checkpoint: Path, tmp_path: Path, seed: int
) -> Counter[str]:
    """Runs ``_chaos_job.py args`` and SIGKILLs it ``kills`` times, spread evenly over MOMENTS in a
    random order with random delays; returns how many kills came at each moment (and mid-batch)."""
    moments: Counter[str] = Counter()
    plan = [MOMENTS[i % len(MOMENTS)] for i in range(kills)]
    rng.shuffle(plan)
    for kill, moment in enumerate(plan):
        spawned, before = time.monotonic(), committed_batches(checkpoint)
        if moment == "starting":
            # While the driver starts, recovers its checkpoint or replays the batch it was killed in.
            delay = rng.uniform(1.0, 12.0)

            def ready(delay: float = delay, spawned: float = spawned) -> bool:
                return time.monotonic() - spawned >= delay
        else:
            # After it made progress: anywhere (mid-batch or between batches), or once a batch
            # it planned is not yet committed; then after a random delay.
            delay, progressed = rng.uniform(0.0, 1.5 if moment == "running" else 0.3), []
            in_batch = moment == "in a batch"

            def ready(
                delay: float = delay,
                before: int = before,
                progressed: list[float] = progressed,
                in_batch: bool = in_batch,
            ) -> bool:
                committed = committed_batches(checkpoint)
                planned = _planned_batches(checkpoint)
                if not progressed and committed > before and (not in_batch or planned > committed):
                    progressed.append(time.monotonic())
                return bool(progressed) and time.monotonic() - progressed[0] >= delay

        run_job_until(
            "_chaos_job.py",
            args,
            ready,
            timeout=180,
            died=f"the query died on its own (seed {seed}, kill {kill})",
            stuck=f"the query made no progress (seed {seed}, kill {kill})",
            log=tmp_path / f"job-{kill}.log",
        )
        moments[moment] += 1
        # A batch planned (in the offset log) and not committed: the kill came mid-batch.
        if _planned_batches(checkpoint) > committed_batches(checkpoint):
            moments["mid-batch"] += 1
    return moments


def _seed() -> int:
    return int(os.environ.get("STREAMCTL_CHAOS_SEED", time.time_ns() % 1_000_000))


def test_random_sigkills_of_the_driver_lose_and_duplicate_nothing(spark, servers, make_stream, tmp_path):
    seed = _seed()
    rng = random.Random(seed)
    stream = make_stream(partitions=PARTITIONS)
    checkpoint, output = tmp_path / "cp", tmp_path / "out"
    producer = _Producer(spark, servers, stream)
    producer.start()
    try:
        moments = _kill_repeatedly(
            rng,
            len(MOMENTS) * KILLS_PER_MOMENT,
            [servers, stream, str(checkpoint), str(output)],
            checkpoint,
            tmp_path,
            seed,
        )
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
    assert sum(moments[m] for m in MOMENTS) == len(MOMENTS) * KILLS_PER_MOMENT, context
    assert moments["mid-batch"] > 0, f"no kill came mid-batch ({context})"


def test_sigkills_of_a_transactional_stage_leave_its_intermediate_stream_exactly_once(
    spark, servers, make_stream, tmp_path
):
    """Stage 1 of a pipeline writes an intermediate stream through the transactional sink and is
    SIGKILLed at random moments under a live producer; a plain read_committed Kafka consumer of
    that stream and stage 2 (a streamctl query, read_committed by default) each see every record
    exactly once, and stage 2 still stops on the end-of-stream of stage 1's last run
    (docs/exactly-once.md). Without transactions the kills mid-batch leave duplicates here."""
    seed = _seed()
    rng = random.Random(seed)
    stream, mid = make_stream(partitions=PARTITIONS), make_stream(partitions=PARTITIONS)
    checkpoint = tmp_path / "cp"
    producer = _Producer(spark, servers, stream)
    producer.start()
    try:
        moments = _kill_repeatedly(
            rng,
            TRANSACTIONAL_KILLS,
            [servers, stream, str(checkpoint), mid, "transactional"],
            checkpoint,
            tmp_path,
            seed,
        )
    finally:
        sent = producer.stop()

    stage1 = start_transactional_stage(spark, servers, stream, str(checkpoint), mid, availableNow=True)
    stage1.awaitTermination(300)
    assert stage1.exception() is None, stage1.exception()
    seen: list[int] = []
    stage2 = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest", stop_on_end_of_stream=True))
        .options(**options.intermediate(mid))
        .load()
        .writeStream.foreachBatch(lambda b, _i: seen.extend(int(r.value) for r in b.select("value").collect()))
        .option("checkpointLocation", str(tmp_path / "stage2"))
        .start()
    )
    assert stage2.awaitTermination(180), "stage 2 did not stop on end-of-stream"
    assert stage2.exception() is None, stage2.exception()

    context = f"seed {seed}, {dict(moments)} kills, {sent} records, {committed_batches(checkpoint)} batches"
    # Framed values: type byte 0 for a user record (control messages are 1 and 2).
    framed = [v for p in range(PARTITIONS) for v in kafka.read_committed(spark, servers, mid, p)]
    committed = [int(v[1:]) for v in framed if v[0] == 0]
    assert sorted(committed) == list(range(sent)), f"plain read_committed consumer ({context})"
    assert sorted(seen) == list(range(sent)), f"stage 2 ({context})"
    print(f"chaos (transactional): {context}")
    assert moments["mid-batch"] > 0, f"no kill came mid-batch ({context})"
