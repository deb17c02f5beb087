"""The Kafka tools behind streamctl_testing.kafka and streamctl_testing.control: nothing they write is lost silently."""

from __future__ import annotations

import pytest

from streamctl import StreamctlException
from streamctl_testing import control, kafka


def test_a_failed_send_fails_the_write_naming_the_stream(spark, servers, make_stream):
    stream = make_stream(1)
    too_large = b"x" * 2_000_000  # above the producer's max.request.size (1 MB)
    with pytest.raises(StreamctlException, match=rf"^Writing to stream '{stream}'.*1 of 2 records failed"):
        kafka.produce(spark, servers, stream, [b"ok", too_large])


def test_every_partition_of_a_new_stream_takes_writes_at_once(spark, servers, make_stream):
    # Kafka acknowledges a new topic before its partitions are served; writing at once used to lose
    # the first batch of a partition when a later one got in first (out-of-order sequence).
    for _ in range(3):
        stream = make_stream(8)
        assert control.produce_synthetic_framed(spark, servers, stream, 8_000, value_size=10) == 8_000
        assert kafka.upcoming_offsets(spark, servers, stream) == {p: 1_000 for p in range(8)}
