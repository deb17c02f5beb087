"""A real single-node Kafka broker (KRaft, loopback only) for demos and tests.

Example::

    from streamctl_testing.broker import KafkaBroker

    with KafkaBroker() as broker:
        print(broker.bootstrap_servers)   # 127.0.0.1:40123
"""

from __future__ import annotations

import argparse
import atexit
import base64
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import NamedTuple, NoReturn, Self

from streamctl import _ops
from streamctl_testing._kafka_jars import (
    KAFKA_LIB_ENV,
    KAFKA_VERSION,
    BrokerError,
    ensure_kafka_jars,
    has_kafka_jars,
    kafka_lib_dir,
)
from streamctl_testing._proc import spawn

__all__ = [
    "KAFKA_LIB_ENV",
    "KAFKA_VERSION",
    "BrokerError",
    "KafkaBroker",
    "ensure_kafka_jars",
    "has_kafka_jars",
    "kafka_lib_dir",
    "main",
]

_HOST = "127.0.0.1"
_READY_LINE = b"Kafka Server started"
# What Kafka logs when a port it must bind is taken (a start that lost a port race).
_PORT_TAKEN = "Address already in use"
_LOG_TAIL_LINES = 40

# Brokers still running, stopped at interpreter exit. Weak so that an abandoned
# broker object is still garbage-collected (and stopped by its finalizer).
_live: weakref.WeakSet[KafkaBroker] = weakref.WeakSet()


class _Quorum(NamedTuple):
    """A node's place in a cluster of several (``streamctl_testing.cluster``): its id, its
    controller port, every controller (``controller.quorum.voters``) and the id all format with."""

    node_id: int
    controller_port: int
    voters: str
    cluster_id: str


_LOG4J2 = """\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
"""


class KafkaBroker:
    """One Kafka 4.3.1 broker+controller process on 127.0.0.1, data in a temp dir.

    ``port`` fixes the client (PLAINTEXT) port; by default a free one is picked.
    ``properties`` override or add broker settings. The process is killed if
    this Python process dies, stopped at interpreter exit, and removed with its
    temp dir by :meth:`stop` or by leaving the ``with`` block.

    Example::

        with KafkaBroker() as broker:
            spark.readStream.format("streamctl") \\
                .option("kafka.bootstrap.servers", broker.bootstrap_servers)
    """

    #: JVM flags every broker started by this process adds to its own. Benchmarks keep the JVM's
    #: defaults; a test run sets ``("-XX:TieredStopAtLevel=1",)`` (tests/conftest.py).
    extra_jvm_flags: tuple[str, ...] = ()

    def __init__(
        self,
        port: int | None = None,
        *,
        lib_dir: Path | None = None,
        properties: Mapping[str, str] | None = None,
        start_timeout: float = 60.0,
        heap: str = "512m",
        quorum: _Quorum | None = None,
    ) -> None:
        self._fixed_port = port
        self._lib_dir = lib_dir
        self._extra = dict(properties or {})
        self._start_timeout = start_timeout
        self._heap = heap
        self._quorum = quorum
        self._work: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._port = 0
        self._controller_port = 0
        self._log_start = 0
        self._out_start = 0
        self._classpath = ""
        self._java = ""

    # -- public API ---------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:PORT"``, the value for ``kafka.bootstrap.servers``."""
        if not self._port:
            raise BrokerError("the Kafka broker has not been started")
        return f"{_HOST}:{self._port}"

    @property
    def port(self) -> int:
        """The client (PLAINTEXT) port; 0 before the first start."""
        return self._port

    @property
    def pid(self) -> int | None:
        """Process id of the broker JVM while it runs, else ``None``."""
        return self._proc.pid if self.running and self._proc else None

    @property
    def running(self) -> bool:
        """Whether the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def work_dir(self) -> Path:
        """Temp directory holding config, data and logs; removed by :meth:`stop`."""
        if self._work is None:
            raise BrokerError("the Kafka broker has not been started")
        return self._work

    @property
    def log_dir(self) -> Path:
        """Kafka's ``log.dirs``: where topic partitions are stored."""
        return self.work_dir / "data"

    @property
    def log_file(self) -> Path:
        """The broker's own log (log4j), kept off our stdout."""
        return self.work_dir / "broker.log"

    @property
    def _out_file(self) -> Path:
        return self.work_dir / "broker.out"

    def start(self) -> Self:
        """Format storage if new, start the broker and wait until it serves.

        Raises :class:`BrokerError` with the tail of the broker log when it
        fails or is not serving within ``start_timeout`` seconds.
        """
        if self.running:
            return self
        fresh = self._work is None
        try:
            if fresh:
                self._prepare()
            self._launch_with_retries(new_ports_allowed=fresh and not self._fixed_port)
        except BaseException:
            # A failed first start leaves nothing behind (a `with` never reaches
            # __exit__ then); a failed restart keeps the data for another try.
            if fresh:
                self.stop()
            else:
                self.kill()
            raise
        return self

    def _launch_with_retries(self, *, new_ports_allowed: bool) -> None:
        # A broker that ended before Kafka logged a line (once on CI: exit code 1, log and output
        # empty, beside other runs' brokers) never reached Kafka's code: it is tried again on the
        # same ports, saying why. A port picked as free can be taken by someone else before the
        # JVM binds it: a first start on picked ports moves to new ones; a restart or a given port
        # must keep its own (clients know it), so that failure stands.
        attempts = 3
        for attempt in range(1, attempts + 1):
            try:
                self._launch()
                return
            except BrokerError as e:
                if attempt == attempts:
                    raise
                if self._never_logged():
                    print(f"streamctl_testing: {e}; starting it again", file=sys.stderr, flush=True)
                elif new_ports_allowed and self._lost_port_race():
                    self._pick_ports()
                    self._write_config()
                else:
                    raise

    def stop(self, timeout: float = 10.0) -> None:
        """Stop (SIGTERM, SIGKILL after ``timeout`` s) and delete the temp dir."""
        self._end_process(graceful=True, timeout=timeout)
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None
        _live.discard(self)

    def kill(self) -> None:
        """Kill the broker hard, like a crash; the data stays for :meth:`restart`."""
        self._end_process(graceful=False, timeout=0)

    def restart(self) -> Self:
        """Stop the process if it runs and start it again on the same ports and data."""
        self._end_process(graceful=True, timeout=10.0)
        return self.start()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __del__(self) -> None:
        # Best effort only; atexit and PR_SET_PDEATHSIG are the real guarantees.
        if getattr(self, "_work", None) is not None:
            self.stop(timeout=2.0)

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        return f"KafkaBroker({_HOST}:{self._port or '?'}, {state})"

    # -- internals ----------------------------------------------------------

    def _prepare(self) -> None:
        lib = ensure_kafka_jars(self._lib_dir)
        self._classpath = str(lib / "*")
        self._java = _java()
        self._work = Path(tempfile.mkdtemp(prefix="streamctl-kafka-"))
        _live.add(self)
        self._pick_ports()
        self._write_config()
        self._format()

    def _pick_ports(self) -> None:
        self._port = self._fixed_port or _free_port()
        self._controller_port = self._quorum.controller_port if self._quorum else _free_port(avoid=(self._port,))

    def _write_config(self) -> None:
        work = self.work_dir
        props = {
            "process.roles": "broker,controller",
            "node.id": str(self._quorum.node_id if self._quorum else 1),
            "controller.quorum.voters": (self._quorum.voters if self._quorum else f"1@{_HOST}:{self._controller_port}"),
            "listeners": f"PLAINTEXT://{_HOST}:{self._port},CONTROLLER://{_HOST}:{self._controller_port}",
            "advertised.listeners": f"PLAINTEXT://{_HOST}:{self._port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": ("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
            "log.dirs": str(self.log_dir),
            # One node: internal topics cannot have more than one replica.
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            # Fewer internal partitions: a first consumer group is ready sooner.
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.num.partitions": "4",
            "group.initial.rebalance.delay.ms": "0",
            # After a hard kill the controller waits out the dead incarnation's
            # session before the restarted broker may register (9 s by default).
            "broker.heartbeat.interval.ms": "500",
            "broker.session.timeout.ms": "3000",
            # Tests must create their topics; a typo should fail, not create one.
            "auto.create.topics.enable": "false",
            "num.partitions": "1",
            "num.network.threads": "2",
            "num.io.threads": "4",
        }
        props.update(self._extra)
        text = "".join(f"{k}={v}\n" for k, v in props.items())
        (work / "server.properties").write_text(text)
        (work / "log4j2.properties").write_text(_LOG4J2.format(log_file=self.log_file))

    def _jvm(self, main_class: str, *args: str, extra_flags: Sequence[str] = ()) -> list[str]:
        return [
            self._java,
            f"-Xmx{self._heap}",
            # Two cores shared with Spark: a single-threaded GC leaves them to the work.
            "-XX:+UseSerialGC",
            "-XX:-UsePerfData",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.work_dir / 'log4j2.properties'}",
            *self.extra_jvm_flags,
            *extra_flags,
            "-cp",
            self._classpath,
            main_class,
            *args,
        ]

    def create_topics(self, topics: Mapping[str, int]) -> None:
        """Creates ``topics`` (name -> partition count) on the running broker, with Kafka's admin
        client (the broker's jars carry no topic tool; auto-creation is off, so that a typo in a
        topic name fails instead of creating it).

        Example::

            broker.create_topics({"orders": 4, "orders-copy": 4})
        """
        if not topics:
            return
        source = Path(__file__).with_name("CreateTopics.java")
        self._run_tool(
            f"creating topics {', '.join(topics)}",
            str(source), self.bootstrap_servers, *(f"{name}:{count}" for name, count in topics.items()),
        )  # fmt: skip

    def _format(self) -> None:
        self._run_tool(
            f"formatting Kafka storage in {self.log_dir}",
            "kafka.tools.StorageTool", "format",
            "-t", self._quorum.cluster_id if self._quorum else _cluster_id(),
            "-c", str(self.work_dir / "server.properties"),
            *self._format_args(),
        )  # fmt: skip

    def _run_tool(self, what: str, main: str, *args: str) -> None:
        """Runs a short-lived tool on the broker's classpath; fails with its output."""
        # A one-second tool: skipping the optimising JIT makes it start faster.
        cmd = self._jvm(main, *args, extra_flags=["-XX:TieredStopAtLevel=1"])
        proc = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = proc.communicate(timeout=self._start_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
        if proc.returncode != 0:
            raise BrokerError(f"{what} failed (exit code {proc.returncode}):\n{_tail(output)}")

    def _format_args(self) -> list[str]:
        """More arguments for ``kafka-storage format`` (a subclass adds SCRAM users there)."""
        return []

    def _launch(self) -> None:
        # What a restart or a retry writes goes after what the format tool and earlier starts did.
        self._log_start, self._out_start = _size(self.log_file), _size(self._out_file)
        cmd = self._jvm("kafka.Kafka", str(self.work_dir / "server.properties"))
        with self._out_file.open("ab") as out:
            # JVM stdout/stderr (crashes, fatal errors) go to a file, never to ours.
            self._proc = spawn(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _live.add(self)
        self._await_ready()

    def _await_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self._start_timeout
        seen, offset, carry = False, self._log_start, b""
        while True:
            if not seen and self.log_file.exists():
                with self.log_file.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read()
                offset += len(chunk)
                seen = _READY_LINE in carry + chunk
                carry = (carry + chunk)[-len(_READY_LINE) :]
            if seen and _accepts(self._port):
                return
            code = self._proc.poll()
            if code is not None:
                said = " before logging anything" if self._never_logged() else ""
                raise BrokerError(
                    f"the Kafka broker exited with code {code}{said} while starting on "
                    f"{_HOST}:{self._port}. Broker log:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self._end_process(graceful=False, timeout=0)
                raise BrokerError(
                    f"the Kafka broker was not serving on {_HOST}:{self._port} after "
                    f"{self._start_timeout:.0f} s. Broker log:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def _lost_port_race(self) -> bool:
        return _PORT_TAKEN in self.log_tail()

    def _never_logged(self) -> bool:
        """Whether the last launch ended before Kafka logged a line (the format tool writes to the
        same log first, so only what came after the launch counts)."""
        return _size(self.log_file) == self._log_start

    def log_tail(self) -> str:
        """The last lines the latest start wrote to the broker log, then to the JVM's own output."""
        parts = []
        for path, start in ((self.log_file, self._log_start), (self._out_file, self._out_start)):
            if path.exists():
                with path.open("rb") as f:
                    f.seek(start)
                    parts.append(_tail(f.read()))
        return "\n".join(p for p in parts if p) or "(no output)"

    def _end_process(self, *, graceful: bool, timeout: float) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        if graceful:
            proc.terminate()
            try:
                proc.wait(timeout)
                return
            except subprocess.TimeoutExpired:
                pass
        proc.kill()
        proc.wait()


def _java() -> str:
    """The java streamctl's own commands run (``streamctl._ops.java``), for the broker's JVM."""
    try:
        return _ops.java()
    except _ops.OpsError as e:
        raise BrokerError(f"cannot run the Kafka broker: {e}") from e


def _free_port(avoid: Collection[int] = ()) -> int:
    while True:
        with socket.socket() as s:
            s.bind((_HOST, 0))
            port: int = s.getsockname()[1]
        if port not in avoid:
            return port


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((_HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


def _cluster_id() -> str:
    # Kafka's cluster id format: a UUID in URL-safe base64 without padding. A
    # leading '-' would read as a command-line flag, so avoid it as Kafka does.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _tail(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return "\n".join(lines[-_LOG_TAIL_LINES:])


@atexit.register
def _stop_all() -> None:
    for broker in list(_live):
        broker.stop(timeout=5.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a broker in the foreground until Ctrl-C or SIGTERM.

    The body of ``python -m streamctl broker``.

    Prints the bootstrap servers as the only line on stdout, so scripts can read it.

    Example::

        $ python -m streamctl broker --port 9092 --topic orders:4 --topic orders-copy:4
        127.0.0.1:9092
    """
    parser = argparse.ArgumentParser(
        prog="python -m streamctl broker",
        description=(f"Run a single-node Kafka {KAFKA_VERSION} broker (KRaft) on 127.0.0.1."),
    )
    parser.add_argument("--port", type=int, help="client port (default: a free one)")
    parser.add_argument(
        "--topic",
        action="append",
        default=[],
        type=_topic,
        metavar="NAME:PARTITIONS",
        help="create this topic once the broker is up (repeatable; topics are not created automatically)",
    )
    parser.add_argument(
        "--fetch-only",
        action="store_true",
        help="only fetch the broker jars, print where, and exit",
    )
    args = parser.parse_args(argv)
    try:
        if args.fetch_only:
            print(ensure_kafka_jars())
            return 0
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            return _serve_forever(args.port, dict(args.topic))
        finally:
            signal.signal(signal.SIGTERM, previous)
    except BrokerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def _topic(text: str) -> tuple[str, int]:
    name, sep, count = text.rpartition(":")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME:PARTITIONS (e.g. orders:4)")
    return name, int(count)


def _serve_forever(port: int | None, topics: Mapping[str, int]) -> int:
    with KafkaBroker(port=port) as broker:
        broker.create_topics(topics)
        print(broker.bootstrap_servers, flush=True)
        print(
            f"Kafka {KAFKA_VERSION} broker running (pid {broker.pid}, log {broker.log_file}); Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        while broker.running:
            time.sleep(0.5)
        print(
            f"the Kafka broker exited on its own. Broker log:\n{broker.log_tail()}",
            file=sys.stderr,
        )
        return 1


def _raise_interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    # Turn SIGTERM into the same clean shutdown path as Ctrl-C.
    raise KeyboardInterrupt
