"""The embedded Kafka broker: really serves Kafka, stops cleanly, never outlives us."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import streamctl_testing
from streamctl import _ops
from streamctl_testing import broker as broker_module
from streamctl_testing import kafka_broker
from streamctl_testing.broker import KAFKA_VERSION, BrokerError, KafkaBroker, ensure_kafka_jars, kafka_lib_dir

from conftest import wait_for

HOST = "127.0.0.1"
PACKAGE_ROOT = str(Path(streamctl_testing.__file__).resolve().parent.parent)


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    with kafka_broker() as b:
        yield b


def api_versions(port: int) -> tuple[int, int, int]:
    """Send a Kafka ApiVersions v0 request; return (correlation id, error code, #apis).

    A real protocol exchange, so an open port alone cannot pass for a broker.
    """
    client_id = b"streamctl-test"
    body = struct.pack(">hhih", 18, 0, 4242, len(client_id)) + client_id
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", recv_exactly(s, 4))[0]
        reply = recv_exactly(s, size)
    correlation_id, error_code, api_count = struct.unpack(">ihi", reply[:10])
    return correlation_id, error_code, api_count


def recv_exactly(s: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        assert chunk, "broker closed the connection"
        data += chunk
    return data


def alive(pid: int) -> bool:
    """Whether pid runs; a zombie counts as dead (PID 1 may be slow to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_dead(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def python_child(code: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": PACKAGE_ROOT}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=full_env)


def test_serves_kafka_protocol_on_its_advertised_port(broker: KafkaBroker) -> None:
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    assert host == HOST
    assert int(port) == broker.port
    correlation_id, error_code, api_count = api_versions(broker.port)
    assert (correlation_id, error_code) == (4242, 0)
    assert api_count > 10
    assert broker.log_dir.is_dir()
    assert "Kafka Server started" in broker.log_file.read_text()


def test_stop_ends_the_process_frees_the_port_and_removes_the_temp_dir() -> None:
    b = KafkaBroker().start()
    pid, port, work = b.pid, b.port, b.work_dir
    assert pid is not None and alive(pid)

    b.stop()

    assert not alive(pid)
    assert not b.running and b.pid is None
    assert refuses_connections(port)
    with socket.socket() as s:
        s.bind((HOST, port))  # raises if anything still holds the port
    assert not work.exists()


def test_kill_makes_it_unreachable_and_restart_brings_it_back() -> None:
    with kafka_broker() as b:
        servers, pid = b.bootstrap_servers, b.pid
        assert pid is not None

        b.kill()
        assert not alive(pid)
        assert refuses_connections(b.port)

        b.restart()
        assert b.bootstrap_servers == servers
        assert api_versions(b.port)[1] == 0


class _OneLaunchEndsSilently(KafkaBroker):
    """Its broker JVM number `silent` is `false`: exit code 1 before Kafka logs a line, as once
    seen on CI."""

    def __init__(self, silent: int, port: int | None = None) -> None:
        super().__init__(port)
        self.silent, self.launches = silent, 0

    def _jvm(self, main_class: str, *args: str, extra_flags: tuple[str, ...] | list[str] = ()) -> list[str]:
        if main_class == "kafka.Kafka":
            self.launches += 1
            if self.launches == self.silent:
                return [shutil.which("false") or "false"]
        return super()._jvm(main_class, *args, extra_flags=extra_flags)


def test_a_start_that_ends_before_kafka_logs_is_tried_again_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    with _OneLaunchEndsSilently(silent=1) as b:
        assert b.launches == 2
        assert api_versions(b.port)[1] == 0
    said = capsys.readouterr().err
    assert "the Kafka broker exited with code 1 before logging anything" in said
    assert "starting it again" in said


def test_a_restart_or_a_given_port_is_tried_again_on_the_same_port() -> None:
    given = broker_module._free_port()  # noqa: SLF001
    with _OneLaunchEndsSilently(silent=1, port=given) as b:
        assert (b.launches, b.port) == (2, given)
    with _OneLaunchEndsSilently(silent=2) as b:
        port = b.port
        b.restart()  # clients know the port: the retry must not move it
        assert (b.launches, b.port) == (3, port)
        assert api_versions(port)[1] == 0


def test_a_start_that_fails_in_kafka_says_kafkas_reason() -> None:
    # A port given and taken: Kafka's own code fails (binding its listener), and logs why.
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        b = KafkaBroker(port=taken.getsockname()[1])
        with pytest.raises(BrokerError) as failed:
            b.start()
    message = str(failed.value)
    assert "exited with code 1 while starting" in message
    assert "Address already in use" in message


def kill_pending(pid: int) -> bool:
    """Whether SIGKILL has been sent to pid and not yet acted on (/proc's pending-signal masks)."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return any(int(status[mask], 16) >> (signal.SIGKILL - 1) & 1 for mask in ("SigPnd", "ShdPnd"))


def test_survives_the_exit_of_the_thread_that_started_it() -> None:
    # PR_SET_PDEATHSIG fires on the death of the forking *thread*. The kernel sends it before it
    # drops the dead thread from /proc, so once the starting thread is gone from there, a SIGKILL
    # meant for the broker has killed it or is pending.
    started: list[KafkaBroker] = []
    t = threading.Thread(target=lambda: started.append(KafkaBroker().start()))
    t.start()
    t.join()
    with started[0] as b:
        wait_for("the starting thread's exit", lambda: not Path(f"/proc/self/task/{t.native_id}").exists(), timeout=30)
        assert alive(b.pid) and not kill_pending(b.pid), "the broker got the death signal of the thread that started it"
        assert b.running
        assert api_versions(b.port)[1] == 0


def test_dies_when_its_parent_python_is_killed() -> None:
    parent = python_child(
        "import time\n"
        "from streamctl_testing.broker import KafkaBroker\n"
        "b = KafkaBroker().start()\n"
        "print(b.pid, b.work_dir, flush=True)\n"
        "time.sleep(600)\n"
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line, f"the parent failed to start a broker (exit code {parent.poll()})"
    pid_text, work = line.split()
    pid = int(pid_text)
    try:
        assert alive(pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert wait_until_dead(pid, 5.0), f"broker {pid} outlived its parent"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)  # a SIGKILLed parent cannot clean up


def test_the_broker_finds_jars_and_java_as_the_product_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert kafka_lib_dir(env) == _ops.cache_dir(env) / f"kafka-{KAFKA_VERSION}" / "lib"
    assert _ops.cache_dir(env) == tmp_path / "cache" / "streamctl"
    assert kafka_lib_dir({**env, "STREAMCTL_KAFKA_LIB": "~/kafka/libs"}) == Path.home() / "kafka" / "libs"
    # JAVA_HOME without a java falls back to the PATH, as for streamctl's own commands; neither: a BrokerError.
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrokerError, match="cannot run the Kafka broker: java not found: set JAVA_HOME"):
        broker_module._java()  # noqa: SLF001


def test_missing_jars_without_maven_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "lib"
    monkeypatch.setenv("STREAMCTL_KAFKA_LIB", str(lib))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn here
    with pytest.raises(BrokerError, match=r"(?s)not in .*lib.*mvn.*STREAMCTL_KAFKA_LIB"):
        KafkaBroker().start()
    assert not lib.exists()


def test_an_interrupted_fetch_leaves_no_cache_and_a_later_fetch_completes(
    tmp_path: Path,
) -> None:
    lib = tmp_path / "lib"
    fetcher = python_child(
        "from streamctl_testing.broker import ensure_kafka_jars\nensure_kafka_jars()\n",
        env={"STREAMCTL_KAFKA_LIB": str(lib)},
    )
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(".lib.partial-*")):
        assert fetcher.poll() is None and time.monotonic() < deadline, "fetch never began"
        time.sleep(0.01)
    fetcher.kill()
    fetcher.wait()

    assert not lib.exists()
    assert ensure_kafka_jars(lib) == lib
    assert (lib / "kafka_2.13-4.3.1.jar").is_file()
    assert (lib / "kafka-server-4.3.1.jar").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["lib"]  # the abandoned try is gone


def test_cli_serves_until_sigterm_then_cleans_up() -> None:
    cli = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom streamctl_testing.broker import main\nsys.exit(main([]))",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT},
    )
    assert cli.stdout is not None and cli.stderr is not None
    servers = cli.stdout.readline().strip()
    status = cli.stderr.readline()
    assert servers.startswith(f"{HOST}:"), f"no bootstrap servers printed: {servers!r} {status!r}"
    broker_pid = int(status.split("(pid ")[1].split(",")[0])
    work = Path(status.split("log ")[1].split(")")[0]).parent
    try:
        assert api_versions(int(servers.rsplit(":", 1)[1]))[1] == 0

        cli.send_signal(signal.SIGTERM)

        assert cli.wait(timeout=30) == 0
        assert not alive(broker_pid)
        assert not work.exists()
        assert cli.stdout.read() == ""  # the servers line is all it prints on stdout
    finally:
        if cli.poll() is None:
            cli.kill()
