"""Lag and health where operators already look: the Spark UI's SQL tab (DataSource V2 custom
metrics, read through Spark's REST API) and Spark's metrics system (scraped from the driver's
PrometheusServlet), on a driver of their own that has its UI up (tests/_monitoring_job.py)."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import streamctl
from streamctl_testing import control, kafka

from conftest import T0, wait_for

# docs/operations.md "Prometheus": the relabel rule that turns the flattened names into labels.
PER_PARTITION = re.compile(
    r"metrics_(?P<app>.+)_driver_streamctl_query_(?P<query>.+)_topic_(?P<topic>.+)"
    r"_partition_(?P<partition>[0-9]+)_(?P<metric>[A-Za-z]+)_Value"
)
PER_QUERY = re.compile(r"metrics_(?P<app>.+)_driver_streamctl_query_(?P<query>.+)_(?P<metric>[A-Za-z]+)_Value")


class Driver:
    """The job's driver, driven line by line over its stdin."""

    def __init__(self, log: Path) -> None:
        self.log = log
        with log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("_monitoring_job.py"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        # Lines are read on a thread of their own, so that a driver that hangs, rather than dies,
        # fails the test after a wait instead of blocking the worker.
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, name="monitoring-job-stdout", daemon=True).start()
        first = self._answer()
        self.ui, self.app = first["ui"], first["app"]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _answer(self, timeout: float = 300.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"the monitoring job's driver gave no answer in {timeout:.0f} s:\n{self.log.read_text()[-3000:]}"
                ) from None
            if line is None:
                self._lines.put(None)  # the end stays for any later question
                raise AssertionError(f"the monitoring job's driver died:\n{self.log.read_text()[-3000:]}")
            if line.startswith("{"):  # anything else on stdout is not the job's answer
                return json.loads(line)

    def ask(self, *words: str) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(" ".join(words) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.ui + path, timeout=30) as r:
            return r.read().decode()

    def close(self) -> None:
        with contextlib.suppress(AssertionError, BrokenPipeError):  # the driver died already
            self.ask("exit")
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    d = Driver(tmp_path_factory.mktemp("monitoring") / "driver.log")
    yield d
    d.close()


def _executions(driver: Driver) -> list[dict]:
    return json.loads(driver.get(f"/api/v1/applications/{driver.app}/sql?details=true&length=1000"))


def _sql_metrics(driver: Driver, before: frozenset[int]) -> dict[str, int]:
    """Every streamctl metric of every SQL execution but those in ``before``, summed over executions
    and nodes."""
    totals: dict[str, int] = {}
    for execution in _executions(driver):
        if execution["id"] in before:
            continue
        for node in execution.get("nodes", []):
            for m in node.get("metrics", []):
                if m["name"].startswith("streamctl "):
                    totals[m["name"]] = totals.get(m["name"], 0) + int(m["value"])
    return totals


def _copy_shows(driver: Driver, expected: dict[str, int], *copy: str) -> None:
    """Runs the job's ``copy`` command and waits until the SQL tab shows ``expected``, summed over
    the executions it ran."""
    before = frozenset(e["id"] for e in _executions(driver))
    assert driver.ask("copy", *copy) == {"copied": True}
    # The status store takes the batch's last metric updates from the listener bus, after the query.
    deadline = time.monotonic() + 60
    while (shown := _sql_metrics(driver, before)) != expected:
        assert time.monotonic() < deadline, f"the SQL tab shows {shown}"
        time.sleep(0.5)


def test_the_sql_tab_shows_what_each_batch_read_and_wrote(spark, servers, make_stream, driver, tmp_path):
    mid, out = make_stream(partitions=2), make_stream(partitions=2)
    control.send_watermark(spark, servers, mid, "p0", 1, T0)
    control.produce_framed(
        spark, servers, mid, [str(i).encode() for i in range(100)], partitions=[i % 2 for i in range(100)]
    )
    control.send_watermark(spark, servers, mid, "p0", 1, T0 + 1000)
    expected = {
        "streamctl records read": 100,
        "streamctl control messages read": 4,  # two watermarks on each of two partitions
        "streamctl records skipped (data loss)": 0,
        "streamctl records withheld by the chooser": 0,
        "streamctl records written": 100,
        # Sent by the driver after the writers committed: the watermark and the end-of-stream of the
        # AvailableNow run, each to both partitions.
        "streamctl control messages sent": 4,
    }
    _copy_shows(driver, expected, servers, mid, out, str(tmp_path / "cp"))


def test_plain_streams_show_no_control_figures(spark, servers, make_stream, driver, tmp_path):
    # A plain source reads no control message and a plain sink sends none: their nodes have no such
    # figure (each would be one more accumulator in every task attempt, always 0).
    src, out = make_stream(partitions=2), make_stream(partitions=2)
    kafka.produce(spark, servers, src, [str(i).encode() for i in range(10)], partitions=[i % 2 for i in range(10)])
    expected = {
        "streamctl records read": 10,
        "streamctl records skipped (data loss)": 0,
        "streamctl records withheld by the chooser": 0,
        "streamctl records written": 10,
    }
    _copy_shows(driver, expected, servers, src, out, str(tmp_path / "cp"), "plain")


def _scrape(driver: Driver, query: str) -> dict[tuple[str, ...], int]:
    """The query's streamctl gauges on the driver's /metrics/prometheus, labelled by the documented
    relabel rule: (metric, topic, partition) or (metric,) -> value."""
    found: dict[tuple[str, ...], int] = {}
    for line in driver.get("/metrics/prometheus").splitlines():
        name, _, value = line.partition(" ")
        name = name.split("{")[0]
        if m := PER_PARTITION.fullmatch(name):
            if m["query"] == query:
                found[(m["metric"], m["topic"], m["partition"])] = int(float(value))
        elif (m := PER_QUERY.fullmatch(name)) and m["query"] == query:
            found[(m["metric"],)] = int(float(value))
    return found


def _scrape_once_it_has(driver: Driver, query: str, gauge: tuple[str, ...]) -> dict[tuple[str, ...], int]:
    """The query's gauges (:func:`_scrape`), once they include ``gauge``: they come with the
    progress event, which the listener bus delivers after the batch."""
    deadline = time.monotonic() + 60
    while gauge not in (scraped := _scrape(driver, query)):
        assert time.monotonic() < deadline, f"no {gauge} among the query's gauges: {scraped}"
        time.sleep(0.5)
    return scraped


def _seconds_behind(scraped: dict[tuple[str, ...], int], keys: dict) -> dict:
    """The scraped ``secondsBehind`` of each (topic, partition) in ``keys`` (None where absent)."""
    return {k: scraped.get(("secondsBehind", *k)) for k in keys}


def _flat(name: str) -> str:
    """A stream name as PrometheusServlet flattens it."""
    return re.sub(r"[^a-zA-Z0-9]", "_", name)


def test_prometheus_shows_the_lag_and_control_health_describe_shows(spark, servers, make_stream, driver, tmp_path):
    src, mid = make_stream(partitions=2), make_stream(partitions=2)
    # Record i at offset i // 2 of partition i % 2, 30 s after record i - 1 (all in the past).
    kafka.produce(
        spark,
        servers,
        src,
        [str(i).encode() for i in range(100)],
        partitions=[i % 2 for i in range(100)],
        timestamps=[T0 + i * 30_000 for i in range(100)],
    )
    control.send_idle_status(spark, servers, mid, "p0", 2, idle=True, watermark_ms=T0)
    control.send_watermark(spark, servers, mid, "p1", 2, T0 + 5000)
    control.produce_framed(
        spark, servers, mid, [str(i).encode() for i in range(20)], partitions=[i % 2 for i in range(20)]
    )
    checkpoint = str(tmp_path / "cp")
    assert driver.ask("start", servers, src, mid, checkpoint, "lag_q") == {"started": True}

    described = streamctl.describe(checkpoint, bootstrap_servers=servers)
    scraped = _scrape_once_it_has(driver, "lag_q", ("recordsSkipped",))
    lag = {(p.stream, p.partition): p.lag for p in described.partitions}
    # 100 plain records; per intermediate partition an idle message, a watermark and 10 records.
    assert sum(lag.values()) == 100 + 2 * 12 - 30  # one batch of 30 offsets read, the rest behind
    assert {(_flat(s), str(p)): v for (s, p), v in lag.items()} == {
        (t, p): v for (metric, *tp), v in scraped.items() if metric == "recordsBehind" for t, p in [tp]
    }
    assert scraped[("recordsSkipped",)] == 0
    assert {k: v for k, v in scraped.items() if k[0] == "recordsSkipped" and len(k) == 3} == {
        ("recordsSkipped", _flat(p.stream), str(p.partition)): 0 for p in described.partitions
    }
    # Seconds behind: the newest record on the broker minus the last processed one, as describe says.
    assert {(_flat(p.stream), str(p.partition)): p.seconds_behind for p in described.partitions} == {
        (t, p): scraped.get(("secondsBehind", t, p))
        for t, p in {(_flat(p.stream), str(p.partition)) for p in described.partitions}
    }
    read = [p for p in described.partitions if p.stream == src and p.committed]
    assert read, "the batch read no record of the plain stream"
    for p in read:  # the last processed record is at offset committed - 1, the newest at offset 49
        assert p.seconds_behind == ((2 * 49 + p.partition) - (2 * (p.committed - 1) + p.partition)) * 30
    for p in described.partitions:
        key = (_flat(p.stream), str(p.partition))
        if p.stream == src:
            assert ("producersExpected", *key) not in scraped
            continue
        c = p.control
        assert c is not None
        assert scraped[("producersExpected", *key)] == c.producers == 2
        assert scraped[("producersIdle", *key)] == len(c.idle_producers)
        assert scraped[("endOfStream", *key)] == int(c.end_of_stream) == 0
        # The first batch read both control messages of each partition (its 30 offsets reach 7 of
        # each partition's 12): p0 is idle, so p1's watermark is the partition's.
        assert c.watermark_ms == T0 + 5000
        assert scraped[("watermarkMs", *key)] == c.watermark_ms
        assert abs(scraped[("watermarkLagSeconds", *key)] - (time.time() * 1000 - c.watermark_ms) / 1000) <= 60

    # A stopped query's gauges go with it (at its termination event, which the listener bus delivers
    # after stop() returns).
    assert driver.ask("stop") == {"stopped": True}
    deadline = time.monotonic() + 60
    while (left := _scrape(driver, "lag_q")) != {}:
        assert time.monotonic() < deadline, f"the stopped query's gauges stayed: {left}"
        time.sleep(0.5)

    # Restarted with the plain stream in a higher tier, its first batch reads none of the
    # intermediate stream, which still has records behind: their seconds behind comes from what the
    # first run processed (its progress history), as describe's does.
    assert driver.ask("start", servers, src, mid, checkpoint, "lag_q", src) == {"started": True}
    described = streamctl.describe(checkpoint, bootstrap_servers=servers)
    waiting = {(_flat(p.stream), str(p.partition)): p.seconds_behind for p in described.partitions if p.stream == mid}
    assert all(p.lag > 0 for p in described.partitions if p.stream == mid), described.partitions
    assert None not in waiting.values(), described.partitions
    # The gauges come with the first progress event, which the listener bus delivers after it.
    deadline = time.monotonic() + 60
    while (scraped := _seconds_behind(_scrape(driver, "lag_q"), waiting)) != waiting:
        assert time.monotonic() < deadline, f"scraped {scraped}, describe says {waiting}"
        time.sleep(0.5)
    assert driver.ask("stop") == {"stopped": True}


def test_a_query_of_two_sources_shows_end_of_stream_and_its_watermark_over_both(
    spark, servers, make_stream, driver, tmp_path
):
    """The query-level gauges take every streamctl source into account, not whichever reported
    last: end-of-stream only once every source's inputs ended, the lowest upstream watermark. Run
    twice, the other stream ending the second time, so that the order the sources are reported in
    cannot hide the rule."""
    first, second = make_stream(suffix="a"), make_stream(suffix="b")
    for run, (ended, running) in enumerate([(first, second), (make_stream(suffix="b"), make_stream(suffix="a"))]):
        for stream in (ended, running):
            control.produce_framed(spark, servers, stream, [b"r"])
        control.send_watermark(spark, servers, ended, "p0", 1, T0 + 9000)
        control.send_end_of_stream(spark, servers, ended, "p0", 1)
        control.send_watermark(spark, servers, running, "p0", 1, T0 + 1000)
        name = f"union_q{run}"
        assert driver.ask("union", servers, ended, running, str(tmp_path / name), name) == {"started": True}
        try:
            scraped = _scrape_once_it_has(driver, name, ("upstreamWatermarkMs",))
            assert scraped[("endOfStream", _flat(ended), "0")] == 1
            assert scraped[("endOfStream",)] == 0, "one source's inputs have not ended"
            assert scraped[("upstreamWatermarkMs",)] == T0 + 1000
        finally:
            assert driver.ask("stop") == {"stopped": True}

    # A source that has read nothing yet (an empty stream) has no batch summary, but counts.
    ended, empty = make_stream(suffix="ended"), make_stream(suffix="empty")
    control.produce_framed(spark, servers, ended, [b"r"])
    control.send_end_of_stream(spark, servers, ended, "p0", 1)
    assert driver.ask("union", servers, ended, empty, str(tmp_path / "empty"), "union_empty") == {"started": True}
    try:
        scraped = _scrape_once_it_has(driver, "union_empty", ("endOfStream",))
        assert scraped[("endOfStream",)] == 0, "the empty stream has not ended"
        assert ("upstreamWatermarkMs",) not in scraped, "the empty stream has no watermark yet"
    finally:
        assert driver.ask("stop") == {"stopped": True}

    # A plain stream never ends, so neither does a query that also reads one (nor does it stop).
    ended, plain = make_stream(suffix="ended"), make_stream(suffix="plain")
    control.produce_framed(spark, servers, ended, [b"r"])
    control.send_end_of_stream(spark, servers, ended, "p0", 1)
    kafka.produce(spark, servers, plain, [b"p"])
    assert driver.ask("union", servers, ended, plain, str(tmp_path / "plain"), "union_plain", "plain") == {
        "started": True
    }
    try:
        scraped = _scrape_once_it_has(driver, "union_plain", ("endOfStream", _flat(ended), "0"))
        assert scraped[("endOfStream", _flat(ended), "0")] == 1
        assert scraped[("endOfStream",)] == 0, "the plain stream has not ended"
    finally:
        assert driver.ask("stop") == {"stopped": True}


def test_two_queries_whose_names_flatten_alike_each_keep_their_gauges(servers, make_stream, driver, tmp_path):
    """A gauge's name holds the query's name with its dots as underscores, so queries `a.b` and
    `a_b` (or one name in two sessions) would share names, which the metrics system holds once:
    the second query's gauges go under its name and id rather than failing every report."""
    src, mid = make_stream(suffix="src"), make_stream(suffix="mid")
    name = f"twice_{abs(hash(src))}"
    assert driver.ask("start", servers, src, mid, str(tmp_path / "cp1"), name) == {"started": True}
    dotted = name.replace("_", ".", 1)
    assert driver.ask("start-another", servers, src, mid, str(tmp_path / "cp2"), dotted) == {"started": True}

    def reporting() -> set[str]:
        """The query names of this test's queries' per-query gauges on /metrics/prometheus."""
        names = (line.partition(" ")[0].split("{")[0] for line in driver.get("/metrics/prometheus").splitlines())
        return {
            m["query"]
            for n in names
            if not PER_PARTITION.fullmatch(n) and (m := PER_QUERY.fullmatch(n)) and m["query"].startswith(name)
        }

    try:
        wait_for("both queries' gauges", lambda: len(reporting()) == 2)
        # The first to report has the plain name; the other, its name and query id.
        plain, own = sorted(reporting(), key=len)
        assert plain == name and re.fullmatch(f"{name}_[0-9a-f_]{{36}}", own), (plain, own)
    finally:
        assert driver.ask("stop") == {"stopped": True}
