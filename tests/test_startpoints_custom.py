"""Custom startpoints on a real broker: written from Python, resolved by a class the query names.

The resolver is streamctl-testing's example ``streamctl.testing.examples.RewindResolver``
(kind ``rewind``, payload N: N records before the partition's end).
"""

from __future__ import annotations

import pytest
from pyspark.errors import StreamingQueryException

from streamctl import Startpoint, StartpointManager, options
from streamctl_testing import kafka

from conftest import run_available_now

RESOLVER = "streamctl.testing.examples.RewindResolver"


def _run(spark, servers: str, stream: str, checkpoint: str, **extra: str) -> list[tuple[int, int]]:
    """Runs the query to the end (AvailableNow); the (partition, offset) of every row it read."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .options(**extra)
        .load()
    )
    return [(r.partition, r.offset) for r in run_available_now(df, checkpoint)]


def test_a_custom_startpoint_moves_the_query_through_the_resolver_it_names(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    kafka.produce(spark, servers, stream, [b"v"] * 20, partitions=[i % 2 for i in range(20)])
    cp = str(tmp_path / "cp")
    assert len(_run(spark, servers, stream, cp, **{"startpoint.resolvers": RESOLVER})) == 20

    manager = StartpointManager(spark, checkpoint=cp, bootstrap_servers=servers)
    written = manager.set(stream, 0, Startpoint.custom("rewind", "3"))
    assert [(e.partition, e.startpoint.kind) for e in written] == [(0, "rewind")]

    # Without a resolver for its kind the query does not start, and the startpoint stays.
    with pytest.raises(StreamingQueryException, match="no resolver for custom startpoint kind 'rewind'"):
        _run(spark, servers, stream, cp)
    assert [e.partition for e in manager.list()] == [0]

    rows = _run(spark, servers, stream, cp, **{"startpoint.resolvers": RESOLVER})
    assert sorted(rows) == [(0, 7), (0, 8), (0, 9)], "the last 3 records of partition 0, nothing of partition 1"
    assert manager.list() == [], "applied, and deleted once its batch committed"
    assert _run(spark, servers, stream, cp, **{"startpoint.resolvers": RESOLVER}) == []
