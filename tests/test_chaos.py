"""Chaos: a query's driver SIGKILLed at random moments (while starting and recovering, mid-batch,
between batches) under a live producer, restarted each time on its checkpoint, loses and
duplicates nothing with an idempotent sink.

Each kill costs a driver start (~20 s on 2 cores), so the kills are planned rather than many:
a third each while starting, at a random point after progress, and inside a batch (its offsets
logged, its commit not yet), in a random order with random delays. A transactional stage on
``local-cluster`` also has its executors SIGKILLed mid-batch while its driver lives on."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _chaos_job import LiveProducer, start_chaos_query, start_pipeline_stage

from streamctl import options
from streamctl_testing import kafka
from streamctl_testing.demos.affinity import executor_pids

from conftest import committed_batches, planned_batches, read_committed_numbers, run_job_until

# Kills per moment of the plain query (docs/exactly-once.md reports a longer run); each costs a
# driver start, and CI's two cores share them with the rest of the suite.
KILLS_PER_MOMENT = int(os.environ.get("STREAMCTL_CHAOS_KILLS_PER_MOMENT", "2"))
MOMENTS = ("starting", "running", "in a batch")
PARTITIONS = 3
# Kills of the transactional stage: each costs a driver start, and they share CI's time budget.
TRANSACTIONAL_KILLS = int(os.environ.get("STREAMCTL_CHAOS_TRANSACTIONAL_KILLS", "6"))
# Executor kills of the transactional stage on local-cluster: each costs an executor start.
EXECUTOR_KILLS = int(os.environ.get("STREAMCTL_CHAOS_EXECUTOR_KILLS", "3"))


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
                planned = planned_batches(checkpoint)
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
        if planned_batches(checkpoint) > committed_batches(checkpoint):
            moments["mid-batch"] += 1
    return moments


def _seed() -> int:
    return int(os.environ.get("STREAMCTL_CHAOS_SEED", time.time_ns() % 1_000_000))


def test_random_sigkills_of_the_driver_lose_and_duplicate_nothing(spark, servers, make_stream, tmp_path):
    seed = _seed()
    rng = random.Random(seed)
    stream = make_stream(partitions=PARTITIONS)
    checkpoint, output = tmp_path / "cp", tmp_path / "out"
    producer = LiveProducer(spark, servers, stream, PARTITIONS)
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
    producer = LiveProducer(spark, servers, stream, PARTITIONS)
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

    stage1 = start_pipeline_stage(spark, servers, stream, str(checkpoint), mid, availableNow=True)
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
    committed = read_committed_numbers(spark, servers, mid, PARTITIONS)
    assert committed == list(range(sent)), f"plain read_committed consumer ({context})"
    assert sorted(seen) == list(range(sent)), f"stage 2 ({context})"
    print(f"chaos (transactional): {context}")
    assert moments["mid-batch"] > 0, f"no kill came mid-batch ({context})"


def test_executor_kills_under_a_transactional_stage_leave_its_intermediate_stream_exactly_once(
    spark, servers, make_stream, tmp_path
):
    """Stage 1 runs on ``local-cluster`` (two executor JVMs) under a live producer, and an executor
    is SIGKILLed in the middle of a batch, again and again: Spark runs the lost attempts again on an
    executor it starts anew, each new writer fences the killed one's open transaction, and a plain
    read_committed consumer of the intermediate stream sees every record exactly once while the
    driver goes on."""
    seed = _seed()
    rng = random.Random(seed)
    stream, mid = make_stream(partitions=PARTITIONS), make_stream(partitions=PARTITIONS)
    checkpoint, app_file, log = tmp_path / "cp", tmp_path / "app-id", tmp_path / "job.log"
    stalls = tmp_path / "stalls"
    stalls.mkdir()
    # The first attempt that writes one of these values stalls there, its rows before it sent, and
    # names its executor: the one to kill, mid-write (a kill between writes would rerun nothing).
    values = [str(400 + 600 * k + rng.randrange(200)) for k in range(EXECUTOR_KILLS)]
    args = [servers, stream, str(checkpoint), mid, "transactional", "--executors", "2"]
    args += ["--stall-at", ",".join(values), "--stall-folder", str(stalls)]
    producer = LiveProducer(spark, servers, stream, PARTITIONS)
    producer.start()
    with log.open("w") as err:
        job = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_chaos_job.py")), *args, "--app-id-file", str(app_file)],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )

    def wait(what: str, done, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert job.poll() is None, f"the stage's driver died ({what}, seed {seed}):\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{what} (seed {seed})"
            time.sleep(0.02)

    killed: list[str] = []
    sent = 0
    try:
        for value in values:
            told = stalls / f"stalled-{value}"
            wait(f"an attempt stalled at {value}", told.is_file)
            executor = told.read_text()
            os.kill(executor_pids(app_file.read_text())[executor], signal.SIGKILL)
            killed.append(executor)
        before = committed_batches(checkpoint)
        wait("batches after the last kill", lambda: committed_batches(checkpoint) >= before + 3)
        sent = producer.stop()
        wait("the stage caught up", lambda: len(read_committed_numbers(spark, servers, mid, PARTITIONS)) >= sent)
    finally:
        producer.stop()
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()

    context = f"seed {seed}, executors killed {killed}, {sent} records, {committed_batches(checkpoint)} batches"
    assert read_committed_numbers(spark, servers, mid, PARTITIONS) == list(range(sent)), (
        f"lost or duplicated ({context})"
    )
    print(f"chaos (executors): {context}")
