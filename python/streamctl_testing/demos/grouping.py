"""Demo step: a topic grows from 2 to 4 partitions under a running keyed count."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import streamctl
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing.demos import problem, say

if TYPE_CHECKING:  # streamctl_testing.demo imports this module; importing it back at runtime would be circular
    from streamctl_testing.demo import DemoContext

USERS = 20


def _produce(ctx: DemoContext, stream: str, start: int, n: int) -> Counter[str]:
    users = [f"user-{i % USERS}" for i in range(start, start + n)]
    kafka.produce(
        ctx.spark,
        ctx.servers,
        stream,
        [f"click {i}".encode() for i in range(start, start + n)],
        keys=[u.encode() for u in users],
    )
    return Counter(users)


def step_partition_expansion(ctx: DemoContext) -> None:
    """Grow a topic from 2 to 4 partitions while a per-task keyed count runs; no user changes task."""
    spark, servers, stream = ctx.spark, ctx.servers, "user-events"
    kafka.create_stream(spark, servers, stream, 2)
    produced = _produce(ctx, stream, 0, 2000)
    say(f"Produced 2000 clicks of {USERS} users to topic '{stream}' (2 partitions, partitioned by user).")

    counts: Counter[tuple[str, str]] = Counter()  # the per-task state: (task, user) -> clicks
    batches: list[tuple[int, int, int]] = []  # (batch, partition, offset)
    read = [0]

    def count(batch, batch_id: int) -> None:
        for r in batch.select("task", "key", "partition", "offset").collect():
            counts[(r.task, bytes(r.key).decode())] += 1
            batches.append((batch_id, r.partition, r.offset))
            read[0] += 1

    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=500))
        .options(**options.partition_check_interval("1s"))
        .load()
    )
    checkpoint = ctx.checkpoint("user-events-count")
    q = (
        df.writeStream.foreachBatch(count)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        while read[0] == 0 and q.exception() is None:
            time.sleep(0.2)
        before = kafka.upcoming_offsets(spark, servers, stream)
        kafka.grow_stream(spark, servers, stream, 4)
        while len(kafka.upcoming_offsets(spark, servers, stream)) < 4:
            time.sleep(0.2)
        produced += _produce(ctx, stream, 2000, 2000)
        say(
            f"While the query ran ({read[0]} clicks counted so far), grew '{stream}' to 4 partitions "
            "and produced 2000 more clicks; Kafka now sends each user to hash % 4."
        )
        deadline = time.monotonic() + 180
        while read[0] < 4000 and time.monotonic() < deadline and q.exception() is None:
            time.sleep(0.5)
    finally:
        q.stop()
    if read[0] != 4000:
        raise problem(f"the query counted {read[0]} of 4000 clicks ({q.exception() or 'no error'})")

    tasks_of: dict[str, set[str]] = defaultdict(set)
    total: Counter[str] = Counter()
    for (task, user), n in counts.items():
        tasks_of[user].add(task)
        total[user] += n
    mapping = ", ".join(
        f"partition {r.partition} -> {r.task}" for r in streamctl.describe_tasks(spark, checkpoint=checkpoint)
    )
    say(f"describe_tasks: {mapping}. No task was created: the new partitions joined the task of p % 2.")
    for new in (2, 3):
        origin = new % 2
        last_old = max(b for b, p, o in batches if p == origin and o < before[origin])
        first_new = min(b for b, p, _ in batches if p == new)
        first_offset = min(o for _, p, o in batches if p == new)
        say(
            f"Task Partition {origin} got partition {origin}'s records from before the growth by batch {last_old}, "
            f"then partition {new}'s from batch {first_new} on, starting at its offset {first_offset}."
        )
    moved = sorted(u for u, ts in tasks_of.items() if len(ts) > 1)
    wrong = sorted(u for u in produced if total[u] != produced[u])
    sample = "user-3"
    say(f"{sample}: {total[sample]} clicks counted, {produced[sample]} produced, all in task {min(tasks_of[sample])}.")
    if not moved and not wrong:
        say(
            f"All {len(produced)} users: every count equals the clicks produced ({sum(total.values())} in all), "
            "and each user was counted by exactly one task."
        )
    else:
        raise problem(f"users counted in two tasks: {moved}; users with wrong counts: {wrong}")
