"""Message choosers on a real broker: bootstrap order, priority under a budget, time-aligned
merge, a user chooser class, and bad chooser options."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from streamctl import StreamctlException, options
from streamctl_testing import kafka

T0 = 1_700_000_000_000


@dataclass(frozen=True)
class Seen:
    """One processed record and where it came in the processing sequence."""

    batch: int
    position: int
    stream: str
    partition: int
    offset: int
    ts: int


def _process(df, tmp_path) -> list[list[Seen]]:
    """Runs ``df`` with Trigger.AvailableNow; returns each non-empty batch's records in the
    order the batch yields them. Inside one task that is the order its chooser picked."""
    batches: list[list[Seen]] = []

    def collect(batch_df, batch_id):
        rows = batch_df.selectExpr("topic", "partition", "offset", "unix_millis(timestamp) AS ts").collect()
        if rows:
            batches.append([Seen(batch_id, i, r.topic, r.partition, r.offset, r.ts) for i, r in enumerate(rows)])

    cp = str(tmp_path / "cp")
    q = df.writeStream.foreachBatch(collect).option("checkpointLocation", cp).trigger(availableNow=True).start()
    assert q.awaitTermination(180), "the AvailableNow run did not finish"
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return batches


def _source(spark, servers: str, streams: list[str], *more: dict[str, str], budget: int | None = None):
    reader = spark.readStream.format("streamctl").options(
        **options.source(servers, streams, starting_offsets="earliest", max_records_per_batch=budget)
    )
    for opts in more:
        reader = reader.options(**opts)
    return reader.load()


@pytest.mark.smoke
def test_a_bootstrap_stream_is_read_to_its_head_before_any_other_record(spark, servers, make_stream, tmp_path):
    currency = make_stream(partitions=3, suffix="currency")
    tx = make_stream(partitions=3, suffix="tx")
    # Currency partition 2 stays empty: an empty partition counts as caught up.
    kafka.produce(spark, servers, currency, [b"c"] * 24, partitions=[i % 2 for i in range(24)])
    kafka.produce(spark, servers, tx, [b"t"] * 45, partitions=[i % 3 for i in range(45)])

    batches = _process(_source(spark, servers, [tx, currency], options.bootstrap(currency), budget=10), tmp_path)

    seen = [s for b in batches for s in b]
    cur = [(s.batch, s.position) for s in seen if s.stream == currency]
    txs = [(s.batch, s.position) for s in seen if s.stream == tx]
    assert (len(cur), len(txs)) == (24, 45)
    assert max(cur) < min(txs), "a transaction was processed before the last currency record"
    assert all(len(b) <= 10 for b in batches)
    # Bootstrapping took the first batches alone (12 per partition, budget 10 shared: 3 batches).
    assert [{s.stream for s in b} for b in batches[:3]] == [{currency}] * 3


def test_priority_gives_the_budget_to_the_high_tier_first(spark, servers, make_stream, tmp_path):
    live = make_stream(suffix="live")
    backfill = make_stream(suffix="backfill")
    kafka.produce(spark, servers, live, [b"l"] * 25)
    kafka.produce(spark, servers, backfill, [b"b"] * 40)

    batches = _process(_source(spark, servers, [backfill, live], options.priority(live, 10), budget=10), tmp_path)

    counts = [(sum(s.stream == live for s in b), sum(s.stream == backfill for s in b)) for b in batches]
    # Backfill starves while live has records; it gets only what live leaves of the budget.
    assert counts == [(10, 0), (10, 0), (5, 5), (0, 10), (0, 10), (0, 10), (0, 5)]
    # Both partitions 0 are one task: inside it, live records come first.
    assert [s.stream for s in batches[2]] == [live] * 5 + [backfill] * 5


def test_time_aligned_merges_streams_in_timestamp_order(spark, servers, make_stream, tmp_path):
    dense = make_stream(suffix="dense")
    sparse = make_stream(suffix="sparse")
    # Distinct timestamps, the dense stream three times as dense: round-robin would interleave them 1:1.
    dense_ts = [T0 + 2 * i for i in range(30)]
    sparse_ts = [T0 + 6 * i + 1 for i in range(10)]
    kafka.produce(spark, servers, dense, [b"d"] * 30, timestamps=dense_ts)
    kafka.produce(spark, servers, sparse, [b"s"] * 10, timestamps=sparse_ts)

    batches = _process(_source(spark, servers, [dense, sparse], options.time_aligned(), budget=10), tmp_path)

    everything = sorted(dense_ts + sparse_ts)
    # Admission: each batch takes the next 10 instants of both streams (one event-time frontier);
    # inside the task (both partitions 0), records come in timestamp order.
    assert [[s.ts for s in b] for b in batches] == [everything[i : i + 10] for i in range(0, 40, 10)]


@pytest.mark.smoke
def test_a_user_chooser_class_orders_the_task(spark, servers, make_stream, tmp_path):
    first = make_stream(suffix="first")
    second = make_stream(suffix="second")
    kafka.produce(spark, servers, first, [b"f"] * 4)
    kafka.produce(spark, servers, second, [b"s"] * 4)

    example = "streamctl.testing.examples.StreamOrderChooser"
    batches = _process(_source(spark, servers, [second, first], options.chooser_class(example)), tmp_path)

    # The example chooser prefers streams in the order of option 'subscribe'.
    assert [s.stream for b in batches for s in b] == [second] * 4 + [first] * 4

    # ... or in the order of its own option, chooser.option.order.
    reordered = options.chooser_class(example, {"Order": f"{first},{second}"})
    batches = _process(_source(spark, servers, [second, first], reordered), tmp_path / "reordered")
    assert [s.stream for b in batches for s in b] == [first] * 4 + [second] * 4


@pytest.mark.parametrize(
    ("bad", "fragments"),
    [
        (lambda s: options.priority(s, "high"), ["priority", "'high'"]),  # type: ignore[arg-type]
        (lambda s: options.bootstrap("not-read"), ["stream.not-read.bootstrap", "'not-read'"]),
        (lambda s: options.batch_size(0), ["chooser.batch.size", "> 0"]),
        (
            lambda s: options.chooser_class("com.example.NoSuchChooser"),
            ["Option chooser.class: class 'com.example.NoSuchChooser'", "not found"],
        ),
        (
            lambda s: options.chooser_class("java.lang.String"),
            ["Option chooser.class: class 'java.lang.String'", "does not implement"],
        ),
        (lambda s: {"chooser": "fastest"}, ["Unknown chooser 'fastest'", "time-aligned"]),
        (lambda s: {"chooser.option.order": s}, ["'chooser.option.order' is for the class named by", "chooser.class"]),
    ],
    ids=["priority", "bootstrap", "batch-size", "missing-class", "not-a-chooser", "chooser-name", "option-no-class"],
)
def test_bad_chooser_option_fails_at_load_naming_it(spark, servers, make_stream, bad, fragments):
    stream = make_stream()
    with pytest.raises(StreamctlException) as err:
        _source(spark, servers, [stream], bad(stream))
    for f in fragments:
        assert f in str(err.value), f"{f!r} not in error: {str(err.value)[:2000]}"


def test_a_partition_that_ended_early_in_a_tasks_last_batch_is_read_again(spark, servers, make_stream, tmp_path):
    # Two streams in one task: the short one ends first and is paused while the long one still
    # polls (more than one fetch). The pooled consumer must not keep it paused for the next batch.
    short = make_stream(suffix="short")
    long = make_stream(suffix="long")
    kafka.produce(spark, servers, short, [b"s"] * 5)
    kafka.produce_synthetic(spark, servers, long, 1500, value_size=10)
    df = _source(spark, servers, [short, long], {"poll.timeout.ms": "15000"})
    assert sum(len(b) for b in _process(df, tmp_path)) == 1505
    kafka.produce(spark, servers, short, [b"s"] * 5)
    assert [(s.stream, s.offset) for b in _process(df, tmp_path) for s in b] == [(short, o) for o in range(5, 10)]
