"""Demo step: rewind a stopped query by one hour with a startpoint; its running count is kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from streamctl import cli, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm
from streamctl_testing.demos import say

if TYPE_CHECKING:
    from streamctl_testing.demo import DemoContext


def step_startpoints(ctx: DemoContext) -> None:
    """Startpoints: stop a query, rewind it one hour, restart it: the last hour is counted again, state kept."""
    spark, servers = ctx.spark, ctx.servers
    kafka.create_stream(spark, servers, "page-views", 2)
    # One view every 10 minutes on each partition for 3 hours, the last 5 minutes ago: six of
    # them fall in the last hour, well clear of its edge.
    start = datetime.now(UTC) - timedelta(hours=3) + timedelta(minutes=5)
    n = 36
    kafka.produce(
        spark,
        servers,
        "page-views",
        [b"view"] * n,
        partitions=[i % 2 for i in range(n)],
        timestamps=[int((start + timedelta(minutes=10 * (i // 2))).timestamp() * 1000) for i in range(n)],
    )
    say("Produced 3 hours of page views (one every 10 minutes) on 2 partitions of topic 'page-views'.")

    checkpoint = ctx.checkpoint("page-view-count")
    counts: dict[int, int] = {}
    views = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, ["page-views"], starting_offsets="earliest"))
        .load()
    )

    def run_and_stop(expected: int) -> Any:
        q = (
            views.groupBy("partition")
            .count()
            .writeStream.outputMode("complete")
            .foreachBatch(lambda batch, _id: counts.update({r.partition: r["count"] for r in batch.collect()}))
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        q.processAllAvailable()  # then stop between batches, as an operator would
        q.stop()
        if counts != {0: expected, 1: expected}:
            raise RuntimeError(f"the demo query counted {counts}, expected {expected} per partition: {q.exception()}")
        return q

    run_and_stop(18)
    say(f"A running count per partition (stateful, checkpointed) counted {_sorted(counts)}, then was stopped.")

    an_hour_ago = (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="seconds")
    say(f"streamctl startpoints reset --checkpoint <cp> --topic page-views --to-datetime {an_hour_ago} --execute:")
    cli.main(
        ["startpoints", "reset", "--checkpoint", checkpoint, "--topic", "page-views", "--to-datetime", an_hour_ago,
         "--bootstrap-servers", servers, "--execute"],
    )  # fmt: skip

    q = run_and_stop(24)
    # The batch that applied the startpoint records where it began ("starts") in its end offset.
    applied = next(s for p in q.recentProgress for s in p["sources"] if "starts" in _offset(s["endOffset"]))
    begin, end = _offset(applied["startOffset"]), _offset(applied["endOffset"])
    # The offset's positions by task, as the JVM reads them (the compact form groups them by stream).
    by_task = {
        k: json.loads(jvm(spark).streamctl.plan.SourcePosition.positionsByTask(json.dumps(o)))
        for k, o in (("begin", begin), ("end", end))
    }
    say("Restarted from the same checkpoint. Its first batch read:")
    for task, positions in sorted(by_task["end"].items()):
        for ssp, until in positions.items():
            checkpointed = by_task["begin"][task][ssp]
            since = end.get("starts", {}).get(task, {}).get(ssp, checkpointed)
            _, stream, partition = ssp.split("/")
            say(f"    {stream} partition {partition}: offsets {since} to {until - 1} (checkpoint: {checkpointed})")
    say(f"The count went on from its state: {_sorted(counts)} (18 + the 6 views of the last hour, re-read).")


def _sorted(counts: dict[int, int]) -> dict[int, int]:
    return dict(sorted(counts.items()))


def _offset(value: Any) -> dict[str, Any]:
    # Progress carries the source offset as JSON text or already parsed, depending on the path.
    return json.loads(value) if isinstance(value, str) else (value or {})
