"""A broker outage: survived up to the wait (kafka.default.api.timeout.ms, 60 s by default) in every
phase of a query, and beyond it a failure that names the servers and the option to change.

Each test has a broker of its own, killed and restarted on the same port and log dir, so the
outage touches nothing else; the session broker (``servers``) stays up as the other system.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm
from streamctl_testing.broker import KafkaBroker

from conftest import driver_log, wait_for

OUTAGE_S = 35  # the 34 s outage, with a margin; the broker then takes a few seconds to serve


@pytest.fixture
def own_broker() -> Iterator[KafkaBroker]:
    with KafkaBroker(properties={"log.retention.ms": "-1"}) as b:
        yield b


def _source(spark, servers, stream, **kafka_options):
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", kafka=kafka_options))
        .load()
    )


def _failure(q: StreamingQuery) -> str:
    with pytest.raises(StreamingQueryException) as err:
        q.awaitTermination(120)
        pytest.fail("the query did not fail")
    return str(err.value)


def _written(spark, servers, stream) -> int:
    """User records in partition 0 of an intermediate stream (type byte 0; control messages left out)."""
    return sum(1 for v in kafka.read_raw(spark, servers, stream, 0) if v[:1] == b"\x00")


def test_an_outage_of_35_seconds_is_survived_while_planning_reading_and_writing(
    spark, servers, own_broker, make_stream, tmp_path
):
    broker = own_broker
    down = broker.bootstrap_servers
    for name in ("read", "idle", "mid"):
        kafka.create_stream(spark, down, name, 1)
    src = make_stream()  # on the session broker, which stays up
    killed = threading.Event()
    reread: list[int] = []
    read: list[int] = []
    idle: list[int] = []

    def reading(batch, _id):
        rows = batch.collect()
        read.extend(r.offset for r in rows)
        if rows and not killed.is_set():
            broker.kill()
            killed.set()
            # Spark reads the batch again for a second action: this read waits out the outage. The
            # first read left its records with the pooled consumer; without them, as after an
            # executor restart, this one must fetch from the broker.
            jvm(spark).streamctl.system.ConsumerPool.clear()
            reread.append(batch.count())

    queries = [
        _source(spark, down, "read")
        .writeStream.foreachBatch(reading)
        .queryName("reading")
        .option("checkpointLocation", str(tmp_path / "r"))
        .trigger(processingTime="500 milliseconds")
        .start(),
        # No new data: its planning asks the dead broker for offsets every trigger.
        _source(spark, down, "idle")
        .writeStream.foreachBatch(lambda b, _i: idle.extend(r.offset for r in b.collect()))
        .queryName("planning")
        .option("checkpointLocation", str(tmp_path / "p"))
        .trigger(processingTime="500 milliseconds")
        .start(),
        # Reads the live broker and writes to the dead one.
        _source(spark, servers, src)
        .select("value")
        .writeStream.format("streamctl")
        .options(**options.sink(down, "mid", intermediate=True))
        .queryName("writing")
        .option("checkpointLocation", str(tmp_path / "w"))
        .trigger(processingTime="500 milliseconds")
        .start(),
    ]
    try:
        kafka.produce(spark, servers, src, [b"w0", b"w1"])
        wait_for("the first writes", lambda: _written(spark, down, "mid") == 2, *queries, timeout=240)
        kafka.produce(spark, down, "read", [b"r0", b"r1", b"r2"])
        wait_for("the reading batch", killed.is_set, *queries, timeout=240)
        started = time.monotonic()
        kafka.produce(spark, servers, src, [b"w2", b"w3"])  # written while the broker is down
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - started)))
        port = broker.port
        broker.start()
        assert broker.port == port

        kafka.produce(spark, down, "read", [b"r3"])
        kafka.produce(spark, down, "idle", [b"i0"])
        wait_for("reads after the outage", lambda: sorted(read) == [0, 1, 2, 3] and idle == [0], *queries, timeout=240)
        wait_for("the writes of the outage", lambda: _written(spark, down, "mid") == 4, *queries, timeout=240)
        user_records = [v for v in kafka.read_raw(spark, down, "mid", 0) if v[:1] == b"\x00"]
        assert sorted(user_records) == [b"\x00w0", b"\x00w1", b"\x00w2", b"\x00w3"]
        assert reread == [3]
        for q in queries:
            assert q.isActive and q.exception() is None, (q.name, q.exception())
    finally:
        for q in queries:
            q.stop()


def test_a_longer_outage_fails_each_phase_naming_the_servers_and_the_option(
    spark, servers, own_broker, make_stream, tmp_path
):
    broker = own_broker
    down = broker.bootstrap_servers
    for name in ("read", "idle", "mid", "control"):
        kafka.create_stream(spark, down, name, 1)
    src, quiet = make_stream(suffix="src"), make_stream(suffix="quiet")
    wait = {"default.api.timeout.ms": "5000"}  # the outage outlasts it
    killed = threading.Event()
    read_error: list[str] = []

    def reading(batch, _id):
        if batch.count() and not killed.is_set():
            broker.kill()
            killed.set()
            jvm(spark).streamctl.system.ConsumerPool.clear()  # no records left in memory: the read needs the broker
            try:
                batch.count()
            except streamctl.StreamctlException as e:  # the executor's error, message first
                read_error.append(str(e))
                raise

    reader = (
        _source(spark, down, "read", **wait)
        .writeStream.foreachBatch(reading)
        .option("checkpointLocation", str(tmp_path / "r"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    planner = (
        _source(spark, down, "idle", **wait)
        .writeStream.foreachBatch(lambda b, _i: b.count())
        .option("checkpointLocation", str(tmp_path / "p"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    writer = (
        _source(spark, servers, src)
        .select("value")
        .writeStream.format("streamctl")
        .options(**options.sink(down, "mid", intermediate=True, kafka=wait))
        .option("checkpointLocation", str(tmp_path / "w"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    ender = (
        _source(spark, servers, quiet)
        .select("value")
        .writeStream.format("streamctl")
        .options(**options.sink(down, "control", intermediate=True, kafka=wait))
        .option("checkpointLocation", str(tmp_path / "e"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    queries = [reader, planner, writer, ender]
    try:
        # Every query has planned against the live broker before it goes away.
        wait_for(
            "every query's first trigger",
            lambda: all(q.lastProgress is not None for q in queries),
            *queries,
            timeout=240,
        )
        kafka.produce(spark, down, "read", [b"r0"])
        wait_for("the reading batch", killed.is_set)  # the broker dies in it: its queries may fail
        kafka.produce(spark, servers, src, [b"w0"])

        option = "option 'kafka.default.api.timeout.ms' sets this wait"
        _failure(reader)
        assert read_error, "the read did not fail"
        assert f"Kafka at {down} did not answer within 5000 ms while reading stream 'read' partition 0" in read_error[0]
        assert option in read_error[0], read_error[0]
        planning = _failure(planner)
        assert re.search(
            rf"Kafka at {down} did not answer within 5000 ms while (listing offsets of idle-0|describing "
            "streams idle)",
            planning,
        ), planning
        assert option in planning
        # The sink asks for the stream's partitions as it plans each batch (admin wait), then sends
        # (delivery wait); either way the error has the same form.
        writing = _failure(writer)
        assert re.search(
            rf"Kafka at {down} did not answer within (5000 ms while describing streams mid|5005 ms while "
            "writing to stream 'mid')",
            writing,
        ), writing
        assert option in writing
        # Control messages go to every partition the stream has when they are sent: asked first (admin wait).
        with pytest.raises(Exception, match="end-of-stream was not sent") as err:
            streamctl.end_of_stream(ender)
        sending = str(err.value)
        sent = "5005 ms while sending end-of-stream of producer '[^']+' to stream 'control' partition 0"
        asked = "5000 ms while describing streams control"
        assert re.search(rf"Kafka at {down} did not answer within ({asked}|{sent})", sending), sending
        assert option in sending
    finally:
        for q in queries:
            q.stop()


def test_a_bootstrap_port_nobody_listens_on_is_warned_about_within_ten_seconds(spark, tmp_path):
    """Nothing listens on the port: one WARN, naming the servers and the option, comes within
    10 s of the start, and the query keeps waiting the documented wait (a real outage may end)."""
    # Bound, never listening, until the test ends: connections are refused, and no other process
    # can take the port meanwhile.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
        with driver_log(spark, "WARN") as log:
            q = (
                _source(spark, dead, "orders")
                .writeStream.format("memory")
                .queryName(f"dead_port_{abs(hash(tmp_path))}")
                .option("checkpointLocation", str(tmp_path / "cp"))
                .start()
            )
            try:
                warned = lambda: [line for line in log().splitlines() if "No Kafka bootstrap server accepted" in line]  # noqa: E731
                wait_for("the WARN about the bootstrap servers", warned, q, timeout=25)
                assert q.isActive and q.exception() is None, "it still waits for the broker"
                (line,) = warned()
                assert line.startswith("WARN ") and dead in line and "option 'kafka.bootstrap.servers'" in line, line
                assert "No Kafka bootstrap server accepted a connection in 10 s" in line, line
                assert "up to 60000 ms in all (option 'kafka.default.api.timeout.ms')" in line, line
            finally:
                q.stop()
