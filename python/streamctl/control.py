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

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import TimestampType

from streamctl import _procedures
from streamctl.errors import StreamctlException

__all__ = ["end_of_stream", "with_upstream_watermark"]

# The column Spark's watermark operator watches: a copy of the source's `watermark`, dropped again
# before the DataFrame is returned.
_WATCHED = "__streamctl_upstream_watermark"


def with_upstream_watermark(
    df: DataFrame, event_time: str, delay: str = "0 seconds", *, watermark: str = "watermark"
) -> DataFrame:
    """``df`` with an event-time watermark on ``event_time`` that follows the reconciled upstream
    watermark (column ``watermark`` of the streamctl source) instead of Spark's ``max(event_time)``.

    Use it where you would call ``df.withWatermark(event_time, delay)``; windows are then finalized
    only once the slowest upstream producer's watermark minus ``delay`` passed them, and rows older
    than that are dropped as late. ``df`` must still carry the source's ``watermark`` column (keep it
    in your ``select``); apply this before any aggregation or shuffle. The source is read once.

    How: Spark derives a watermark from the largest value a ``withWatermark`` column takes, and its
    stateful operators find the event-time column by the delay Spark records in that column's
    metadata. So ``withWatermark`` goes on a copy of ``watermark`` (Spark's watermark is then the
    largest upstream watermark the rows carried, minus ``delay``), and the delay it recorded is
    copied onto ``event_time``, which windows, late-row dropping and state eviction then use. A
    watermark that arrives after a batch's last record takes effect with the next record, since
    Spark moves watermarks only from rows. The query's progress ``eventTime`` statistics (min,
    avg, max) then describe the rows' upstream watermarks, not ``event_time``.

    Example::

        counts = (streamctl.with_upstream_watermark(events, "ts")
                  .groupBy(F.window("ts", "10 seconds")).count())
    """
    fields = {f.name: f for f in df.schema.fields}
    for name in (event_time, watermark):
        if name not in fields:
            raise StreamctlException(
                f"with_upstream_watermark: column '{name}' is not in the DataFrame ({', '.join(fields)})"
            )
        kind = fields[name].dataType
        if not isinstance(kind, TimestampType):
            raise StreamctlException(
                f"with_upstream_watermark: column '{name}' must be a timestamp, not {kind.simpleString()}"
            )

    watched = df.withColumn(_WATCHED, F.col(watermark)).withWatermark(_WATCHED, delay)
    # Spark's own record of the delay, whatever its form, so this module names no Spark internal.
    delay_metadata = watched.schema[_WATCHED].metadata
    return watched.withMetadata(event_time, {**fields[event_time].metadata, **delay_metadata}).drop(_WATCHED)


def end_of_stream(query: StreamingQuery, spark: SparkSession | None = None) -> None:
    """Declare the inputs of a running ``query`` ended: its streamctl sources admit no new data, it
    finishes what it already admitted (including batches that only close windows), stops, and then
    sends end-of-stream to every partition of every intermediate stream it writes.

    It takes effect whenever it is called, also right after ``start()``: a query ended before its
    first batch reads nothing from its streamctl sources, writes nothing and sends end-of-stream.
    Waits until the query has nothing left to process, so every input must be quiet (another
    source that keeps producing would make it wait forever). Raises ``StreamctlException``, naming
    the query, when it is not running (in this session) or when end-of-stream could not be sent.
    ``spark``: the session that started the query (default: the active one). Works in a classic
    session and over Spark Connect (``CALL streamctl.system.end_of_stream``).

    Example::

        q = df.writeStream.format("streamctl").options(**options.sink(servers, "mid", intermediate=True)).start()
        ...
        streamctl.end_of_stream(q)
    """
    session = spark if spark is not None else SparkSession.active()
    _procedures.rows(session, "end_of_stream", query_id=query.id, run_id=query.runId)
