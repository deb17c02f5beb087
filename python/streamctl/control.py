"""In-band control between chained queries: end-of-stream and the upstream watermark.

A query that writes an intermediate stream with the streamctl sink sends its watermark after
every batch and end-of-stream when its inputs end; a query that reads it reconciles them
(see docs/control-messages.md). From Python you only need two things::

    import streamctl

    # A downstream aggregation whose watermark is the reconciled upstream one:
    events = raw.select(F.col("timestamp").alias("ts"), "value", "watermark")
    counts = streamctl.with_upstream_watermark(events, "ts").groupBy(F.window("ts", "1 minute")).count()

    # A job that knows it is done: finish the current batch, stop, send end-of-stream downstream.
    streamctl.end_of_stream(query)
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import TimestampType

from streamctl import _procedures

__all__ = ["end_of_stream", "with_upstream_watermark"]

_MARKER = "__streamctl_upstream_watermark"


def with_upstream_watermark(
    df: DataFrame, event_time: str, delay: str = "0 seconds", *, watermark: str = "watermark"
) -> DataFrame:
    """``df`` with an event-time watermark on ``event_time`` that follows the reconciled upstream
    watermark (column ``watermark`` of the streamctl source) instead of Spark's ``max(event_time)``.

    Use it where you would call ``df.withWatermark(event_time, delay)``; windows are then finalized
    only once the slowest upstream producer's watermark minus ``delay`` passed them, and rows older
    than that are dropped as late. ``df`` must still carry the source's ``watermark`` column (keep it
    in your ``select``); apply this before any aggregation or shuffle.

    How: Spark derives a watermark from the largest value a ``withWatermark`` column takes, and with
    several ``withWatermark`` operators it keeps the smallest of their values. So the rows are unioned
    with one marker row per input row whose event time is the row's upstream watermark, and only the
    marker branch carries the watermark. Spark reads the source twice (once per branch); marker rows
    never reach your aggregation. A watermark that arrives after a batch's last record takes effect
    with the next record, since Spark moves watermarks only from rows.

    Example::

        counts = (streamctl.with_upstream_watermark(events, "ts")
                  .groupBy(F.window("ts", "10 seconds")).count())
    """
    fields = {f.name: f for f in df.schema.fields}
    for name in (event_time, watermark):
        if name not in fields:
            raise ValueError(f"with_upstream_watermark: column '{name}' is not in the DataFrame ({', '.join(fields)})")
        kind = fields[name].dataType
        if not isinstance(kind, TimestampType):
            raise ValueError(f"with_upstream_watermark: column '{name}' must be a timestamp, not {kind.simpleString()}")

    markers = (
        df.where(F.col(watermark).isNotNull())
        .select(
            *[
                (F.col(watermark) if f.name == event_time else F.lit(None).cast(f.dataType)).alias(f.name)
                for f in df.schema.fields
            ],
            F.lit(True).alias(_MARKER),
        )
        .withWatermark(event_time, delay)
    )
    rows = df.withColumn(_MARKER, F.lit(None).cast("boolean"))
    # The marker branch comes first: a union's columns (and their watermark metadata) are its first
    # child's. The filter must stay above the union, or Spark's optimizer pushes it into the marker
    # branch below the watermark, which then never sees a row. A nondeterministic predicate is
    # never pushed through a union; `rand() + 1 > 0` is always true but not simplified away
    # (unlike `rand() >= 0`, which Spark rewrites to true).
    keep: Column = F.when(F.col(_MARKER).isNull(), (F.rand(0) + F.lit(1.0)) > F.lit(0.0)).otherwise(F.lit(False))
    return markers.union(rows).where(keep).drop(_MARKER)


def end_of_stream(query: StreamingQuery, spark: SparkSession | None = None) -> None:
    """Declare the inputs of a running ``query`` ended: its streamctl sources admit no new data, it
    finishes what it already admitted (including batches that only close windows), stops, and then
    sends end-of-stream to every partition of every intermediate stream it writes.

    It takes effect whenever it is called, also right after ``start()``: a query ended before its
    first batch reads nothing from its streamctl sources, writes nothing and sends end-of-stream.
    Waits until the query has nothing left to process, so every input must be quiet (another
    source that keeps producing would make it wait forever). Raises ``RuntimeError`` when the query
    is not running and ``StreamctlException`` (naming the query and the reason) when end-of-stream
    could not be sent. ``spark``: the session that started the query (default: the active one).
    Works in a classic session and over Spark Connect (``CALL streamctl.system.end_of_stream``).

    Example::

        q = df.writeStream.format("streamctl").options(**options.sink(servers, "mid", intermediate=True)).start()
        ...
        streamctl.end_of_stream(q)
    """
    if not query.isActive:
        raise RuntimeError(f"end_of_stream: query {query.id} is not running; start it and call end_of_stream again")
    session = spark if spark is not None else SparkSession.active()
    _procedures.rows(session, "end_of_stream", query_id=query.id, run_id=query.runId)
