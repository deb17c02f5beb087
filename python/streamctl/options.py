"""Typed helpers that build option dictionaries for ``format("streamctl")``.

Example::

    df = (spark.readStream.format("streamctl")
          .options(**options.source("127.0.0.1:9092", ["orders"], max_records_per_batch=10_000))
          .options(**options.intermediate("orders"))
          .load())
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from streamctl._grouping_options import broadcast as broadcast
from streamctl._grouping_options import expansion_algorithm as expansion_algorithm
from streamctl._grouping_options import grouper as grouper
from streamctl._grouping_options import grouper_class as grouper_class
from streamctl._grouping_options import partition_check_interval as partition_check_interval
from streamctl._grouping_options import user_class_options as _user_class_options
from streamctl.errors import StreamctlException


def source(
    bootstrap_servers: str,
    streams: Iterable[str],
    *,
    max_records_per_batch: int | None = None,
    starting_offsets: str | None = None,
    metadata_store_path: str | None = None,
    fail_on_data_loss: bool | None = None,
    stop_on_end_of_stream: bool | None = None,
    kafka: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Options of the streamctl source, under the names of Spark's Kafka source (``subscribe``,
    ``maxOffsetsPerTrigger``, ``startingOffsets``, ``failOnDataLoss``). ``starting_offsets`` is
    ``"earliest"``, ``"latest"`` (the default, as in Spark's Kafka source) or per-partition JSON,
    and only matters for a query's first run. ``stop_on_end_of_stream=False`` keeps a query
    running after all its inputs ended. ``kafka``: Kafka client settings without the ``kafka.``
    prefix (``{"security.protocol": "SSL"}`` becomes option ``kafka.security.protocol``).

    Example::

        options.source("127.0.0.1:9092", ["orders", "rates"], starting_offsets="earliest")
        # {'kafka.bootstrap.servers': '127.0.0.1:9092', 'subscribe': 'orders,rates', 'startingOffsets': 'earliest'}
    """
    if isinstance(streams, str):  # a string is an iterable of one-letter streams
        raise StreamctlException(
            f"streams: give a list of stream names, e.g. [{streams!r}], not the string {streams!r}"
        )
    # An empty list is refused by the JVM's subscription rule at load(), as an empty 'subscribe' is.
    opts = {"kafka.bootstrap.servers": bootstrap_servers, "subscribe": ",".join(streams)}
    if max_records_per_batch is not None:
        opts["maxOffsetsPerTrigger"] = str(max_records_per_batch)
    if starting_offsets is not None:
        opts["startingOffsets"] = starting_offsets
    if metadata_store_path is not None:
        opts["metadata.store.path"] = metadata_store_path
    if fail_on_data_loss is not None:
        opts["failOnDataLoss"] = _bool(fail_on_data_loss)
    if stop_on_end_of_stream is not None:
        opts["stop.on.end.of.stream"] = _bool(stop_on_end_of_stream)
    opts.update({f"kafka.{k}": v for k, v in (kafka or {}).items()})
    return opts


def sink(
    bootstrap_servers: str,
    stream: str,
    *,
    intermediate: bool = False,
    producer_name: str | None = None,
    producer_count: int | None = None,
    end_of_stream_after_available_now: bool | None = None,
    producer_idle_timeout: str | None = None,
    watermark_interval: str | None = None,
    transactional: bool | None = None,
    transactional_id_prefix: str | None = None,
    kafka: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Options of the streamctl sink, which writes topic ``stream``.

    By default it writes plain records, exactly as ``format("kafka")`` does (any Kafka consumer
    reads them). ``intermediate=True`` writes an intermediate stream instead: framed values and
    in-band control messages (watermarks, end-of-stream), read downstream with
    :func:`intermediate`; the ``producer_*`` and ``end_of_stream_*`` options are about those
    control messages and need it.

    The writing query is one control-message producer named after the query; when several
    queries write one stream, give each its own ``producer_name`` and all the same
    ``producer_count``. ``end_of_stream_after_available_now=False`` stops a finished
    ``Trigger.AvailableNow`` run from ending the stream (for runs repeated on a schedule).
    ``producer_idle_timeout`` (default ``"1min"``; ``"none"`` turns it off): after that long
    without writing a record the query tells readers it is idle, so it no longer holds their
    watermark back (docs/control-messages.md, "Idle producers"). ``watermark_interval`` (default
    ``"50ms"``): in real-time mode, how often an intermediate sink checks its query's watermark and
    sends it on when it advanced (docs/real-time.md). ``transactional=True`` writes each batch's
    records of a writer partition in one Kafka transaction, so ``read_committed`` readers see
    every record exactly once, also after retries and restarts; unset, it is on for an
    intermediate stream (except in real-time mode) and off for plain records; ``transactional_id_prefix``
    (default ``"streamctl"``) starts its transactional ids and marker groups (docs/exactly-once.md).

    Example::

        (df.writeStream.format("streamctl")
           .options(**options.sink("127.0.0.1:9092", "enriched", intermediate=True))
           .option("checkpointLocation", "/chk/enrich")
           .start())
    """
    opts = {"kafka.bootstrap.servers": bootstrap_servers, "topic": stream}
    if intermediate:
        opts["intermediate"] = "true"
    if producer_name is not None:
        opts["producer.name"] = producer_name
    if producer_count is not None:
        opts["producer.count"] = str(producer_count)
    if end_of_stream_after_available_now is not None:
        opts["end.of.stream.after.available.now"] = _bool(end_of_stream_after_available_now)
    if producer_idle_timeout is not None:
        opts["producer.idle.timeout"] = producer_idle_timeout
    if watermark_interval is not None:
        opts["watermark.interval"] = watermark_interval
    if transactional is not None:
        opts["transactional"] = _bool(transactional)
    if transactional_id_prefix is not None:
        opts["transactionalIdPrefix"] = transactional_id_prefix
    opts.update({f"kafka.{k}": v for k, v in (kafka or {}).items()})
    return opts


def intermediate(*streams: str) -> dict[str, str]:
    """Marks streams as intermediate (written by streamctl's sink): readers strip the framing.

    Example::

        options.intermediate("enriched")  # {'stream.enriched.intermediate': 'true'}
    """
    return {f"stream.{s}.intermediate": "true" for s in streams}


def bootstrap(*streams: str) -> dict[str, str]:
    """Bootstrap streams: nothing else is read until each of their partitions reached the head
    it had when the query started (empty partitions count as read), e.g. reference data.

    Example::

        options.bootstrap("rates")  # {'stream.rates.bootstrap': 'true'}
    """
    return {f"stream.{s}.bootstrap": "true" for s in streams}


def priority(stream: str, n: int) -> dict[str, str]:
    """Priority tier of ``stream`` (default 0): higher tiers take the batch budget and are
    processed first inside a task; a lower tier waits while a higher one has records.

    Example::

        options.priority("live", 1)  # {'stream.live.priority': '1'}
    """
    return {f"stream.{stream}.priority": str(n)}


def batch_size(n: int) -> dict[str, str]:
    """Keep processing one partition up to ``n`` records in a row while it has records.

    Example::

        options.batch_size(100)  # {'chooser.batch.size': '100'}
    """
    return {"chooser.batch.size": str(n)}


def time_aligned() -> dict[str, str]:
    """Process records in timestamp order inside a task, and admit every stream up to one
    common event-time frontier under the batch budget.

    Example::

        options.time_aligned()  # {'chooser': 'time-aligned'}
    """
    return {"chooser": "time-aligned"}


def chooser_class(name: str, options: Mapping[str, str] | None = None) -> dict[str, str]:
    """A chooser class of your own (fully qualified; Scala or Java, on the Spark classpath).
    ``options`` become ``chooser.option.<name>``, which its constructor receives with the
    query's other options (names in lower case).

    Example::

        options.chooser_class("com.example.StreamOrderChooser", {"order": "audit,orders"})
        # {'chooser.class': 'com.example.StreamOrderChooser', 'chooser.option.order': 'audit,orders'}
    """
    return {"chooser.class": name, **_user_class_options("chooser", options)}


def _bool(value: bool) -> str:
    return "true" if value else "false"
