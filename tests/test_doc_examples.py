"""Every Python example in README.md and docs/*.md runs, so none can rot.

Each page's ```python blocks run in order, in one namespace, against a broker of this module's
own (so the examples' fixed topic names are safe) and the tests' SparkSession. A page's examples
share the names its text introduces (``spark``, ``servers``, a running ``query``...): ``PRELUDES``
below defines them, per page, as a reader of that page would have them. Two substitutions make
the examples' paths and hosts this machine's: ``/chk/`` becomes a temporary directory and
``host1:9092`` the broker; a real-time trigger's ``5 minutes`` becomes ``2 seconds``, so that its
first batch ends within the test.

Every streaming query an example starts must make progress (or end) without an exception; the
test then stops what is still running. A block that cannot run here says why in an HTML comment
on the line before its fence, ``<!-- example not run: <why> -->`` (invisible on the page);
``test_examples_not_run_are_few_and_say_why`` keeps that list short.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql.streaming import StreamingQueryListener

from streamctl_testing import control, kafka
from streamctl_testing.broker import KafkaBroker

from conftest import session_conf, wait_for

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- example not run: (.+?) -->\n```python\n")

# Topics the examples name, with their partition counts.
TOPICS = {
    "orders": 4, "rates": 4, "orders-copy": 4, "transactions": 2, "currency-codes": 1, "live": 1, "backfill": 1,
    "clicks": 2, "sessions-by-user": 2, "sessions-by-page": 2, "mid": 1, "out": 1,
}  # fmt: skip

_COMMON = """
import streamctl
from pyspark.sql import functions as F
from streamctl import options
"""

# What each page's text has introduced by the time its examples run (see the module docstring).
PRELUDES = {
    "README.md": _COMMON
    + """
counts = (spark.readStream.format("streamctl")
          .options(**options.source(servers, ["orders"], starting_offsets="earliest")).load().groupBy("key").count())
query = (counts.writeStream.outputMode("complete").format("console")
         .option("checkpointLocation", "/chk/orders-count").start())
query.processAllAvailable()
raw = (spark.readStream.format("streamctl").options(**options.source(servers, ["mid"], starting_offsets="earliest"))
       .options(**options.intermediate("mid")).load())
""",
    "docs/choosers.md": _COMMON + 'cp = "/chk/choosers"\n',
    "docs/control-messages.md": _COMMON,
    "docs/exactly-once.md": "",
    "docs/grouping.md": _COMMON
    + """
(spark.readStream.format("streamctl").options(**options.source(servers, ["orders"], starting_offsets="earliest")).load()
 .writeStream.format("memory").queryName("grouping_orders_count").option("checkpointLocation", "/chk/orders-count")
 .trigger(availableNow=True).start().awaitTermination())
""",
    "docs/host-affinity.md": _COMMON
    + """
(spark.readStream.format("streamctl").options(**options.source(servers, ["orders"], starting_offsets="earliest")).load()
 .select("key", "value").writeStream.format("streamctl").options(**options.sink(servers, "orders-copy"))
 .option("checkpointLocation", "/chk/orders-copy").trigger(availableNow=True).start().awaitTermination())
""",
    "docs/migrating-from-kafka-source.md": "",
    "docs/real-time.md": _COMMON,
    "docs/startpoints.md": _COMMON
    + """
from streamctl import Startpoint
manager = streamctl.StartpointManager(spark, checkpoint="/chk/orders-count", bootstrap_servers=servers)
""",
}


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    code: str
    not_run: str | None


def examples(page: str) -> list[Example]:
    text = (ROOT / page).read_text()
    found = []
    for m in re.finditer(r"```python\n(.*?)```", text, re.S):
        before = text[: m.start()]
        why = NOT_RUN.match(text, before.rfind("<!--")) if before.rstrip().endswith("-->") else None
        found.append(Example(page, before.count("\n") + 1, m.group(1), why.group(1) if why else None))
    return found


def test_examples_not_run_are_few_and_say_why():
    skipped = [e for page in PAGES for e in examples(page) if e.not_run]
    # The fourth: docs/spark-lines.md's real-time trigger for pyspark 4.1, which this suite's 4.3 cannot run.
    assert len(skipped) <= 4, [(e.page, e.line, e.not_run) for e in skipped]
    assert all(len(e.not_run) > 30 for e in skipped), skipped  # type: ignore[arg-type]
    # Every page with a runnable example has a prelude, even an empty one: nothing runs by accident.
    assert {e.page for page in PAGES for e in examples(page) if not e.not_run} <= set(PRELUDES)


@pytest.fixture(scope="module")
def doc_servers(spark):
    with KafkaBroker(properties={"log.retention.ms": "-1"}) as broker:
        servers = broker.bootstrap_servers
        for topic, partitions in TOPICS.items():
            kafka.create_stream(spark, servers, topic, partitions)
        # docs/startpoints.md starts partition 3 at offset 1200.
        n = 4 * 1300
        kafka.produce(spark, servers, "orders", [f"{i}".encode() for i in range(n)],
                      keys=[b"k%d" % (i % 5) for i in range(n)], partitions=[i % 4 for i in range(n)])  # fmt: skip
        kafka.produce(spark, servers, "rates", [b"1.1", b"0.9"], keys=[b"EUR", b"GBP"])
        kafka.produce(spark, servers, "currency-codes", [b"1.1", b"0.9"], keys=[b"EUR", b"GBP"])
        kafka.produce(spark, servers, "transactions", [b"10", b"20", b"30"], keys=[b"EUR", b"GBP", b"EUR"])
        kafka.produce(spark, servers, "live", [b"l1", b"l2"])
        kafka.produce(spark, servers, "backfill", [b"b1", b"b2"])
        kafka.produce(spark, servers, "clicks", [b"home", b"cart", b"home"], keys=[b"ann", b"bob", b"ann"])
        # An intermediate stream of event times (ms), as README's and real-time.md's examples read it.
        control.produce_framed(spark, servers, "mid", [str(int(time.time() * 1000)).encode()])
        yield servers


class _Queries(StreamingQueryListener):
    """The queries examples start, and how those that ended ended."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: dict[str, str | None] = {}

    # pyspark's method names.
    def onQueryStarted(self, event) -> None:
        self.started.append(str(event.id))

    def onQueryProgress(self, event) -> None:
        pass

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        self.ended[str(event.id)] = event.exception


def _runnable(code: str, tmp: Path, servers: str) -> str:
    return (
        code.replace("/chk/", f"{tmp}/chk/")
        .replace("host1:9092", servers)
        .replace('realTime="5 minutes"', 'realTime="2 seconds"')
    )


@pytest.mark.parametrize("page", [p for p in PAGES if any(not e.not_run for e in examples(p))])
def test_the_examples_of_a_page_run(spark, doc_servers, page, tmp_path):
    listener = _Queries()
    spark.streams.addListener(listener)
    names = {"spark": spark, "servers": doc_servers}
    confs = {"spark.sql.streaming.realTimeMode.minBatchDuration": "1000"}
    try:
        with session_conf(spark, confs):
            exec(compile(_runnable(PRELUDES[page], tmp_path, doc_servers), f"{page} (prelude)", "exec"), names)
            for e in examples(page):
                if e.not_run:
                    continue
                source = "\n" * (e.line) + _runnable(e.code, tmp_path, doc_servers)  # tracebacks give the page's lines
                exec(compile(source, e.page, "exec"), names)
            # Every query an example started makes progress (or ends) without failing.
            deadline = time.monotonic() + 180
            for qid in listener.started:
                while qid not in listener.ended:
                    q = spark.streams.get(qid)
                    if q is not None and q.recentProgress:
                        break
                    assert time.monotonic() < deadline, f"{page}: query {qid} made no progress in 180 s"
                    time.sleep(0.2)
                assert listener.ended.get(qid) is None, f"{page}: {listener.ended[qid]}"
    finally:
        for qid in listener.started:
            q = spark.streams.get(qid)
            if q is not None:
                q.stop()
        # Termination events arrive after stop() returns: a query that failed after its first
        # progress is seen only in its event, so the listener stays until every event is in.
        try:
            wait_for(
                f"{page}: every query's termination event",
                lambda: set(listener.started) <= listener.ended.keys(),
                timeout=60,
            )
        finally:
            spark.streams.removeListener(listener)
    for qid, exception in listener.ended.items():
        assert exception is None, f"{page}: query {qid}: {exception}"


def test_every_public_function_shows_an_example():
    """Every public function and class of the package, and every option helper, has an example
    in its docstring (the house rule for public API)."""
    import inspect

    import streamctl
    from streamctl import options

    public = {name: getattr(streamctl, name) for name in streamctl.__all__ if name not in ("__version__", "options")}
    public |= {f"options.{n}": f for n, f in vars(options).items() if inspect.isfunction(f) and not n.startswith("_")}
    public = {n: f for n, f in public.items() if inspect.isfunction(f) or inspect.isclass(f)}
    without = sorted(n for n, f in public.items() if "Example" not in (inspect.getdoc(f) or ""))
    assert without == [], without
