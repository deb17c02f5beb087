"""Bad startpoint input fails with an error naming the key, stream, partition or offset; the query
never starts from a position it was not asked for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException

import streamctl
from streamctl import Startpoint, StartpointManager, StreamctlException, options
from streamctl_testing import kafka

from conftest import run_available_now


def _df(spark, servers, streams, **extra):
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, streams, starting_offsets="earliest"))
        .options(**extra)
        .load()
    )


def _query_fails(df, cp: str, *fragments: str) -> str:
    with pytest.raises(StreamingQueryException) as err:
        run_available_now(df, cp)
    message = str(err.value)
    for f in fragments:
        assert f in message, f"{f!r} not in error: {message[:3000]}"
    return message


def test_api_refuses_bad_requests_naming_what_is_wrong(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"a", b"b", b"c"])
    with pytest.raises(StreamctlException, match="has no timezone"):
        Startpoint.timestamp(datetime(2024, 5, 1, 10, 0))
    with pytest.raises(StreamctlException, match="takes an offset"):
        Startpoint.specific("3")  # type: ignore[arg-type]

    online = StartpointManager(spark, checkpoint=str(tmp_path / "cp"), bootstrap_servers=servers)
    with pytest.raises(StreamctlException, match="offset -1 is negative"):
        online.set(stream, 0, Startpoint.specific(-1))
    missing = f"Partition 4 of stream '{stream}' does not exist \\(setting a startpoint\\): it has 1 partition \\(0\\)"
    with pytest.raises(StreamctlException, match=missing):
        online.set(stream, 4, Startpoint.oldest())
    with pytest.raises(StreamctlException, match="offset 9 is beyond the end of the partition; valid offsets are 0 to"):
        online.set(stream, 0, Startpoint.specific(9))
    with pytest.raises(StreamctlException, match="Give a partition, or the Kafka bootstrap servers"):
        StartpointManager(spark, checkpoint=str(tmp_path / "cp")).set(stream, startpoint=Startpoint.oldest())
    # The JVM's one partition rule, for every call, with or without a broker to count partitions.
    offline = StartpointManager(spark, checkpoint=str(tmp_path / "cp"))
    negative = f"Partition -1 of stream '{stream}' does not exist \\({{}}\\): partitions are numbered from 0"
    with pytest.raises(StreamctlException, match=negative.format("setting a startpoint")):
        offline.set(stream, -1, Startpoint.oldest())
    with pytest.raises(StreamctlException, match=negative.format("reading a startpoint")):
        offline.get(stream, -1)
    with pytest.raises(StreamctlException, match=negative.format("deleting startpoints")):
        offline.delete(stream, -1)
    assert online.list() == [], "nothing was written"

    future = online.preview(stream, 0, Startpoint.timestamp(datetime.now(UTC) + timedelta(days=1)))
    assert [(e.offset, e.end_of_partition) for e in future] == [(3, True)], "the end, and it says so"

    with pytest.raises(StreamctlException, match=r"Give the query's checkpoint .* or metadata_store_path"):
        StartpointManager(spark)  # refused when made, not at its first use
    # Both named: the store path, as the query's source itself decides.
    both = StartpointManager(spark, checkpoint=str(tmp_path / "cp"), metadata_store_path=str(tmp_path / "store"))
    assert both.location == str(tmp_path / "store")

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unwritable = StartpointManager(spark, metadata_store_path=str(blocker / "store"))
    with pytest.raises(StreamctlException, match=f"Metadata store: root .*{blocker.name}/store.* is not writable"):
        unwritable.set(stream, 0, Startpoint.oldest())


def test_query_does_not_start_with_startpoints_it_cannot_apply(spark, servers, make_stream, tmp_path):
    stream, other = make_stream(partitions=2), make_stream(suffix="other")
    cp = str(tmp_path / "cp")
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(other, 0, Startpoint.oldest())
    manager.set(stream, 7, Startpoint.oldest())
    manager.set(stream, 0, Startpoint.oldest(), task="Partition 1")
    _query_fails(
        _df(spark, servers, [stream]),
        cp,
        f"key 'kafka/{other}/0' (oldest): this query does not read stream '{other}'",
        f"key 'kafka/{stream}/7' (oldest): Partition 7 of stream '{stream}' does not exist (a stored startpoint): "
        "it has 2 partitions (0..1)",
        f"key 'kafka/{stream}/0/Partition 1' (oldest): task 'Partition 1' does not read it (read by 'Partition 0')",
        "startpoints list --checkpoint",
    )
    assert len(manager.list()) == 3, "nothing fanned out or deleted"


def test_offset_beyond_the_end_stops_the_query_naming_the_key_and_moves_nothing(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"a", b"b"])
    cp = str(tmp_path / "cp")
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(stream, 0, Startpoint.specific(50))  # no servers: not checked yet
    _query_fails(
        _df(spark, servers, [stream]),
        cp,
        f"key 'kafka/{stream}/0': offset 50 is beyond the end of the partition; valid offsets are 0 to 2",
        "the query does not start",
    )
    assert [e.key for e in manager.list()] == [f"kafka/{stream}/0"], "the store as the user wrote it: not fanned out"


def test_corrupt_json_stops_the_query_naming_the_key(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"a"])
    cp = str(tmp_path / "cp")
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(stream, 0, Startpoint.oldest())
    [stored] = list((Path(cp) / "streamctl" / "startpoints").glob("*.json"))
    stored.write_text('{"version":1,"type":"oldest"')
    _query_fails(_df(spark, servers, [stream]), cp, f"'kafka/{stream}/0'", "Malformed JSON", "does not start")
    [listed] = manager.list()  # shown, so that it can be found and deleted
    assert listed.startpoint is None
    assert "corrupt: " in listed.description and f"'kafka/{stream}/0'" in listed.description
    # describe, where an operator looks first, shows it too instead of failing as a whole.
    other = streamctl.describe(cp).other_startpoints
    assert [s for s in other if "corrupt: " in s and f"'kafka/{stream}/0'" in s], other
    assert [e.key for e in manager.delete(stream, 0)] == [f"kafka/{stream}/0"]
    assert len(run_available_now(_df(spark, servers, [stream]), cp)) == 1


def test_unwritable_metadata_store_stops_the_query_at_start(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"a"])
    cp = str(tmp_path / "cp")
    assert len(run_available_now(_df(spark, servers, [stream]), cp)) == 1
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # Whichever planning step writes the store first (the grouper records its task mapping) names it.
    _query_fails(
        _df(spark, servers, [stream], **{"metadata.store.path": str(blocker / "store")}),
        cp,
        "Metadata store: ",
        "a-file/store",
    )
