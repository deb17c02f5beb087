"""Demo steps for message choosers: a bootstrap stream read first, and priority under a budget.

Example::

    from streamctl_testing.demos.choosers import step_bootstrap
    step_bootstrap(ctx)   # ctx: streamctl_testing.demo.DemoContext
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row

from streamctl import options
from streamctl_testing import kafka
from streamctl_testing.demos import say

if TYPE_CHECKING:
    from streamctl_testing.demo import DemoContext

RATES = {"EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.13, "CAD": 0.73, "AUD": 0.66, "SEK": 0.095, "NOK": 0.093}


def _each_batch(df: DataFrame, checkpoint: str, handle: Callable[[int, list[Row]], None]) -> None:
    """Runs ``df`` with Trigger.AvailableNow, handing every non-empty batch's rows to ``handle``."""

    def run(batch_df: DataFrame, batch_id: int) -> None:
        rows = batch_df.select("topic", "key", "value").collect()
        if rows:
            handle(batch_id, rows)

    q = df.writeStream.foreachBatch(run).option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    q.awaitTermination()


def _convert(ctx: DemoContext, name: str, bootstrap: bool) -> tuple[list[int], int, int]:
    """Converts every transaction to USD with the latest rate seen so far, in processing order.
    Returns the batches that held currency records, the batch of the first transaction, and
    how many transactions found no rate yet."""
    extra = options.bootstrap("currency-codes") if bootstrap else {}
    df = (
        ctx.spark.readStream.format("streamctl")
        .options(
            **options.source(
                ctx.servers, ["transactions", "currency-codes"], starting_offsets="earliest", max_records_per_batch=100
            )
        )
        .options(**extra)
        .load()
    )
    rates: dict[str, float] = {}
    currency_batches: list[int] = []
    first_tx: list[int] = []
    missing = 0

    def handle(batch_id: int, rows: list[Row]) -> None:
        nonlocal missing
        for r in rows:
            code = r.key.decode()
            if r.topic == "currency-codes":
                rates[code] = float(r.value.decode())
                if batch_id not in currency_batches:
                    currency_batches.append(batch_id)
            else:
                if not first_tx:
                    first_tx.append(batch_id)
                if code not in rates:
                    missing += 1

    _each_batch(df, ctx.checkpoint(name), handle)
    return currency_batches, first_tx[0], missing


def step_bootstrap(ctx: DemoContext) -> None:
    """A currency-code stream is read to its head before any transaction is joined with it."""
    spark, servers = ctx.spark, ctx.servers
    kafka.create_stream(spark, servers, "currency-codes", 3)
    kafka.create_stream(spark, servers, "transactions", 3)
    codes = list(RATES)
    kafka.produce(
        spark,
        servers,
        "currency-codes",
        [str(RATES[c]).encode() for c in codes],
        keys=[c.encode() for c in codes],
        partitions=[i % 2 for i in range(len(codes))],
    )
    n = 600
    kafka.produce(
        spark,
        servers,
        "transactions",
        [str(10 + i % 90).encode() for i in range(n)],
        keys=[codes[i % len(codes)].encode() for i in range(n)],
        partitions=[i % 3 for i in range(n)],
    )
    say(
        f"Produced {len(codes)} currency rates (partitions 0 and 1 of 'currency-codes'; partition 2 is empty) "
        f"and {n} transactions in 'transactions', each naming a currency."
    )

    batches, first, missing = _convert(ctx, "bootstrap", bootstrap=True)
    say(
        "With options.bootstrap('currency-codes'), every currency record was processed in "
        f"batch{'es' if len(batches) > 1 else ''} {', '.join(map(str, batches))}, and the first transaction came in "
        f"batch {first}: "
        f"{n - missing} of {n} transactions found their rate. The empty partition did not hold anything up."
    )
    _, _, missing = _convert(ctx, "no-bootstrap", bootstrap=False)
    say(
        f"Without it, the same query read both streams side by side and {missing} transactions were "
        "processed before their currency's rate had been seen."
    )


def step_priority(ctx: DemoContext) -> None:
    """A live stream has priority over a backfill stream under a small batch budget."""
    spark, servers = ctx.spark, ctx.servers
    kafka.create_stream(spark, servers, "live", 2)
    kafka.create_stream(spark, servers, "backfill", 2)
    kafka.produce(spark, servers, "live", [b"now"] * 150, partitions=[i % 2 for i in range(150)])
    kafka.produce(spark, servers, "backfill", [b"old"] * 400, partitions=[i % 2 for i in range(400)])
    say("Produced 150 records in 'live' and 400 in 'backfill'; the query reads both at most 100 records a batch.")

    df = (
        spark.readStream.format("streamctl")
        .options(
            **options.source(servers, ["backfill", "live"], starting_offsets="earliest", max_records_per_batch=100)
        )
        .options(**options.priority("live", 10))
        .load()
    )
    lines: list[str] = []

    def handle(batch_id: int, rows: list[Row]) -> None:
        live = sum(r.topic == "live" for r in rows)
        lines.append(f"    batch {batch_id}: {live} live, {len(rows) - live} backfill")

    _each_batch(df, ctx.checkpoint("priority"), handle)
    say("With options.priority('live', 10), the batches were:")
    for line in lines:
        say(line)
    say(
        "Live took the budget first and backfill waited; backfill got what live left over, "
        "then the whole budget once live was drained. Inside a task, live records also go first."
    )
