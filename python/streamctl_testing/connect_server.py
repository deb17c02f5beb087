"""A real local Spark Connect server with streamctl's jars, started as its own process (the server
ships in the pyspark wheel), on a loopback port it picks itself.

A Python process that has a classic SparkSession cannot also be a Connect client (pyspark switches
the whole process to Connect mode), so clients of this server run in processes of their own.

Example::

    from streamctl_testing.connect_server import SparkConnectServer

    with SparkConnectServer() as server:
        print(server.url)   # sc://127.0.0.1:41234
        # in another process: SparkSession.builder.remote(server.url).getOrCreate()
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

import streamctl
import streamctl_testing
from streamctl._jars import line, pyspark_version, scala_version
from streamctl_testing._maven_fetch import fetch_once, jars_dir
from streamctl_testing._proc import spawn
from streamctl_testing.broker import _accepts

__all__ = ["SERVER_CLASS", "SparkConnectServer", "fetch_server_jars"]

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
_HOST = "127.0.0.1"
# What SparkConnectServer logs once its gRPC server listens, with the address it bound (every line
# from 3.5 on); with port 0 the operating system picked that port, so no other process can hold it.
_STARTED = re.compile(r"Spark Connect server started at: \S*:(\d+)\s*$", re.MULTILINE)
# The Spark lines (and Scala versions) whose pyspark wheel has no Connect server, and the
# spark-connect jar fetched for them (3.5.0: the newest 3.5 one on the reachable Maven Central
# mirror; the protocol is the line's). That mirror has no spark-connect_2.13 of 3.5 at all.
_SERVER_JARS = {("3.5", "2.12"): "3.5.0"}
_SERVER_LIB_ENV = "STREAMCTL_SPARK_CONNECT_LIB"


class SparkConnectServer:
    """``spark-submit --class SparkConnectServer`` with the streamctl and streamctl-testing jars
    on ``--jars``, bound to 127.0.0.1 on a port the system picks (read from the server's log), logs
    in a temp dir. Nothing streamctl-specific is set server-side besides the jars: the client
    helpers register streamctl's SQL catalog themselves. ``conf``: more ``--conf`` settings;
    ``spark_home``: the pyspark installation whose server to run (default: the one imported here).

    Example::

        with SparkConnectServer(conf={"spark.sql.shuffle.partitions": "2"}) as server:
            server.url
    """

    def __init__(
        self,
        *,
        master: str = "local[2]",
        conf: Mapping[str, str] | None = None,
        jars: Sequence[Path] | None = None,
        spark_home: Path | None = None,
        start_timeout: float = 180.0,
    ) -> None:
        self._master = master
        self._conf = dict(conf or {})
        self._jars = list(jars) if jars is not None else [*streamctl.jar_paths(), streamctl_testing.jar_path()]
        self._spark_home = spark_home or _pyspark_home()
        self._start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._work: Path | None = None
        self._port = 0

    @property
    def url(self) -> str:
        """``sc://127.0.0.1:PORT``, for ``SparkSession.builder.remote``."""
        if not self._port:
            raise RuntimeError("the Spark Connect server has not been started")
        return f"sc://{_HOST}:{self._port}"

    @property
    def log_file(self) -> Path:
        """The server's driver log (stdout and stderr)."""
        if self._work is None:
            raise RuntimeError("the Spark Connect server has not been started")
        return self._work / "server.log"

    def start(self) -> Self:
        """Starts the server and waits until it accepts connections; raises with the log's tail
        when it exits or is not serving within ``start_timeout`` seconds."""
        self._work = Path(tempfile.mkdtemp(prefix="streamctl-connect-"))
        self._port = 0
        conf = {
            "spark.connect.grpc.binding.address": _HOST,
            "spark.connect.grpc.binding.port": "0",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
            **self._conf,
        }
        cmd = [
            str(self._spark_home / "bin" / "spark-submit"),
            "--class", SERVER_CLASS,
            "--master", self._master,
            "--jars", ",".join(str(j) for j in [*self._jars, *_server_jars(self._spark_home)]),
            *[arg for k, v in conf.items() for arg in ("--conf", f"{k}={v}")],
        ]  # fmt: skip
        env = {**os.environ, "SPARK_HOME": str(self._spark_home), "SPARK_LOCAL_IP": _HOST}
        with self.log_file.open("ab") as out:
            self._proc = spawn(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self._start_timeout
        while not self._serving():
            if self._proc.poll() is not None:
                message = f"the Spark Connect server exited with {self._proc.returncode}:\n{self.log_tail()}"
                self.stop()
                raise RuntimeError(message)
            if time.monotonic() > deadline:
                message = (
                    f"the Spark Connect server was not serving after {self._start_timeout:.0f} s:\n{self.log_tail()}"
                )
                self.stop()
                raise RuntimeError(message)
            time.sleep(0.2)
        return self

    def _serving(self) -> bool:
        """Whether the server logged the port it listens on and accepts connections there."""
        if not self._port:
            started = _STARTED.search(self.log_file.read_text(errors="replace")) if self.log_file.exists() else None
            self._port = int(started.group(1)) if started else 0
        return bool(self._port) and _accepts(self._port)

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of the server log."""
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 30.0) -> None:
        """Stops the server (SIGTERM, which runs Spark's shutdown hooks; SIGKILL after ``timeout``)
        and removes its temp dir."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def unavailable() -> str | None:
    """Why no Spark Connect server can run on the installed pyspark, or None when one can."""
    spark_home = _pyspark_home()
    if any((spark_home / "jars").glob("spark-connect_*.jar")):
        return None
    spark_line = line(pyspark_version() or "4.3")
    scala = scala_version(spark_line)
    if (spark_line, scala) in _SERVER_JARS:
        return None
    return (
        f"no Spark Connect server for Spark {pyspark_version()} with Scala {scala}: its pyspark has none, "
        f"and the Maven Central mirror the tests fetch from serves no spark-connect_{scala} of Spark {spark_line}"
    )


def fetch_server_jars() -> list[Path]:
    """Fetches now, not at a test's first server start, the Connect server jar the installed
    pyspark lacks (3.5; nothing for the lines that ship it): ``./build.sh`` calls it beside the
    broker's jars, so no test waits on Maven Central or shares ``~/.m2`` with another fetch.

    Example::

        python -c 'from streamctl_testing.connect_server import fetch_server_jars; fetch_server_jars()'
    """
    return _server_jars(_pyspark_home())


def _server_jars(spark_home: Path) -> list[Path]:
    """The Spark Connect server's jar when the Spark at ``spark_home`` does not ship it (pyspark 3.5),
    fetched once from Maven Central; nothing otherwise."""
    if any((spark_home / "jars").glob("spark-connect_*.jar")):
        return []
    spark_line = line(pyspark_version() or "4.3")
    scala = scala_version(spark_line)
    version = _SERVER_JARS.get((spark_line, scala))
    if version is None:
        return []
    marker = f"spark-connect_{scala}-{version}.jar"
    lib = jars_dir(_SERVER_LIB_ENV, f"spark-connect-{version}_{scala}")
    fetch_once(
        Path(__file__).resolve().parent / "spark_connect" / "pom.xml",
        lib,
        marker,
        f"the Spark Connect server (spark-connect_{scala} {version})",
        RuntimeError,
        env_hint=_SERVER_LIB_ENV,
        settings=Path(__file__).resolve().parent / "kafka_connector" / "settings.xml",
        properties={"spark.connect.version": version, "scala.binary.version": scala},
    )
    return [lib / marker]
