"""Runs the JVM's operator commands (``streamctl.ops.OpsMain``) in a plain JVM, without Spark.

``streamctl describe`` and ``streamctl startpoints`` read a query's checkpoint, its metadata
store and the broker with the JVM code the query itself uses (one parser of the offsets, one
writer of startpoints). A SparkSession would take ten seconds to start; a bare ``java`` with the
streamctl jar and the handful of pyspark's jars it needs answers in about one. Imports only
the standard library, so that ``streamctl --help`` stays instant.

Example::

    from streamctl import _ops
    _ops.run("describe", {"checkpoint": "/chk/q1", "bootstrapServers": "127.0.0.1:9092"})
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

MAIN_CLASS = "streamctl.ops.OpsMain"

# What OpsMain needs from pyspark's jars (kafka-clients comes from the wheel): Scala, Jackson,
# Hadoop's FileSystem (the checkpoint and the metadata store may be on HDFS or S3) and logging;
# nothing of Spark (StreamctlException is a Spark error only where Spark's jars are).
_JAR_PREFIXES = (
    "scala-library-",
    "jackson-core-",
    "jackson-databind-",
    "jackson-annotations-",
    "jackson-module-scala_",
    "hadoop-client-api-",
    "hadoop-client-runtime-",
    "slf4j-api-",
    "jcl-over-slf4j-",
    "log4j-api-",
    "log4j-core-",
    "log4j-slf4j2-impl-",
)
# Taken when there: on Scala 2.12 (Spark 3.5) scala-collection-compat is where 2.13's
# scala.jdk.CollectionConverters is; and the object stores' Hadoop file systems with what they
# need (S3A and the AWS SDK, ABFS, GCS), which a cluster's Spark carries for checkpoints there.
_OPTIONAL_JAR_PREFIXES = (
    "scala-collection-compat_",
    "hadoop-aws-",
    "aws-java-sdk-bundle-",
    "bundle-2.",
    "hadoop-azure-",
    "azure-storage-",
    "wildfly-openssl-",
    "gcs-connector-",
    "hadoop-cloud-storage-",
)
# Hadoop's site files, read as Spark's driver reads them from its classpath (core-site.xml for
# fs.defaultFS and the object stores, hdfs-site.xml for HA nameservices).
_SITE_FILES = ("core-site.xml", "hdfs-site.xml")


# Kafka settings whose values are secrets (sasl.jaas.config, ssl.keystore.password, ...): never in
# a child's arguments, which every local user can read.
_SECRET_WORDS = ("password", "jaas", "secret", "token", "key")


def is_secret(option: str) -> bool:
    """Whether a Kafka setting's value must be kept off command lines.

    Example::

        >>> is_secret("sasl.jaas.config"), is_secret("ssl.keystore.password"), is_secret("security.protocol")
        (True, True, False)
    """
    return any(word in option.lower() for word in _SECRET_WORDS)


class OpsError(Exception):
    """An error the JVM reported: its message (a line per problem). ``usage`` is True for a
    malformed request."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def classpath() -> str:
    """The streamctl jar of the installed pyspark's Spark line and the pyspark jars OpsMain needs,
    found without importing pyspark (slow)."""
    from streamctl import _jars

    here = Path(__file__).parent
    try:
        jar = here / "jars" / _jars.jar_name("streamctl")
    except _jars.SparkLineError as e:
        raise OpsError(str(e)) from None
    if not jar.is_file():
        raise OpsError(f"streamctl jar not found at {jar}: install the streamctl wheel (./build.sh package builds one)")
    # The same Spark jars the line and Scala version were told from: a cluster's $SPARK_HOME (whose
    # python/ pyspark has no jars of its own), else the pyspark wheel's.
    jars_dir = _jars.spark_jars_dir()
    if jars_dir is None:
        raise OpsError(
            "Neither $SPARK_HOME/jars nor an installed pyspark's jars were found: streamctl's commands use "
            "Spark's jars (set SPARK_HOME, or pip install pyspark)"
        )
    names = sorted(os.listdir(jars_dir))
    picked = [
        str(jars_dir / n) for n in names if n.endswith(".jar") and n.startswith(_JAR_PREFIXES + _OPTIONAL_JAR_PREFIXES)
    ]
    needed = [p for p in _JAR_PREFIXES if p not in _OPTIONAL_JAR_PREFIXES]
    missing = [p for p in needed if not any(Path(j).name.startswith(p) for j in picked)]
    if missing:
        raise OpsError(f"Spark's jars in {jars_dir} lack {', '.join(missing)}: reinstall pyspark or fix SPARK_HOME")
    # The wheel's kafka-clients jar sits beside the streamctl jars (not relocated, not inside them).
    kafka = sorted(str(j) for j in (here / "jars").glob("kafka-clients-*.jar"))
    return os.pathsep.join([str(jar), *kafka, *picked, *_dist_classpath()])


def _dist_classpath() -> list[str]:
    """The jars of ``$SPARK_DIST_CLASSPATH``, where a Spark built without Hadoop finds the cluster's
    (``$(hadoop classpath)``): a ``dir/*`` entry stands for the jars in ``dir``."""
    out: list[str] = []
    for entry in os.environ.get("SPARK_DIST_CLASSPATH", "").split(os.pathsep):
        if entry.endswith("*"):
            out += sorted(str(j) for j in Path(entry[:-1] or ".").glob("*.jar"))
        elif entry.endswith(".jar") and Path(entry).is_file():
            out.append(entry)
    return out


def hadoop_settings() -> dict[str, Any]:
    """What a Spark driver started here would take its Hadoop configuration from, for a request:
    the site files of ``$HADOOP_CONF_DIR``, ``$YARN_CONF_DIR`` and Spark's conf directory (which
    spark-submit puts on the driver's classpath) as ``hadoopConfFiles``, and the ``spark.hadoop.*``
    settings of ``spark-defaults.conf``, their prefix removed, as ``hadoopConf``.

    Example::

        hadoop_settings()["hadoopConfFiles"]   # ['/etc/hadoop/conf/core-site.xml', ...]
    """
    from streamctl import _jars

    dirs = [os.environ.get("HADOOP_CONF_DIR"), os.environ.get("YARN_CONF_DIR"), _jars.spark_conf_dir()]
    files: list[str] = []
    for d in dirs:
        for name in _SITE_FILES:
            f = Path(d) / name if d else None
            if f is not None and f.is_file() and str(f) not in files:
                files.append(str(f))
    prefix = "spark.hadoop."
    conf = {k[len(prefix) :]: v for k, v in _jars.spark_defaults().items() if k.startswith(prefix)}
    return {"hadoopConfFiles": files, "hadoopConf": conf}


def java() -> str:
    """``$JAVA_HOME/bin/java`` when set (as Spark uses it), else ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise OpsError("java not found: set JAVA_HOME or put java on the PATH (Spark needs it too)")
    return found


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/streamctl``: where streamctl, and its test tooling, keeps what
    it can make again (class-data archives, fetched jars).

    Example::

        >>> cache_dir({"XDG_CACHE_HOME": "/var/cache"})
        PosixPath('/var/cache/streamctl')
    """
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "streamctl"


def _file_stamp(path: str) -> list[int] | None:
    """A file's modification time and size, what the JVM checks a class-data archive's jars by;
    None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def pending_class_archive(archive: Path) -> Path:
    """Where this process has the JVM write ``archive`` at exit, before ``keep_class_archive``
    moves it in place: beside it, named for the process, so two commands making the same archive at
    once do not write into one file.

    Example::

        pending_class_archive(Path("ops-1.jsa"))  # ops-1.jsa.<pid>.tmp
    """
    return archive.with_name(f"{archive.name}.{os.getpid()}.tmp")


def keep_class_archive(pending: Path, archive: Path, made_from: Iterable[str]) -> None:
    """Moves a class-data archive the JVM just wrote (``pending``) to ``archive``, with a record of
    the files it was made from (``<archive>.from``), then removes the archives of that folder
    whose files are gone or changed: the JVM refuses an archive once a jar on its classpath
    changed, so those could never be used again. Each archive is 25 to 170 MB, and every venv,
    clone or upgrade makes its own; without this the cache grows by one per classpath ever used.

    Example::

        keep_class_archive(Path("ops-1.jsa.99.tmp"), Path("ops-1.jsa"), ["/venv/jars/a.jar"])
    """
    record = {p: _file_stamp(p) for p in made_from}
    # Best effort: the command that wrote the archive has succeeded, whatever the cache does.
    try:
        archive.with_name(f"{archive.name}.from").write_text(json.dumps(record))
        os.replace(pending, archive)
        prune_class_archives(archive.parent)
    except OSError:
        pending.unlink(missing_ok=True)


def prune_class_archives(folder: Path) -> list[Path]:
    """Removes the archives of ``folder`` whose record (see ``keep_class_archive``) names a file
    that is gone or changed, or that have no record (made before streamctl kept one); returns
    what it removed. An archive a running JVM maps stays readable to it after the removal.

    Example::

        prune_class_archives(cache_dir())
    """
    removed = []
    for archive in sorted(folder.glob("*.jsa")):
        source = archive.with_name(f"{archive.name}.from")
        try:
            record = json.loads(source.read_text())
            stale = any(_file_stamp(p) != stamp for p, stamp in record.items())
        except (OSError, ValueError, AttributeError):
            stale = True
        if stale:
            try:
                for path in (archive, source, archive.with_name(f"{archive.name}.lock")):
                    path.unlink(missing_ok=True)
            except OSError:
                continue  # another user's, or a read-only cache: left as it is
            removed.append(archive)
    return removed


def _class_archive(java_path: str, cp: str, kafka: bool) -> tuple[list[str], Path | None]:
    """JVM options that load classes from an application class-data archive (AppCDS), which halves
    the start-up: the archive of this java and classpath when there is one, else options that
    write one at exit (with the archive they make, to keep once the JVM succeeded; see
    ``pending_class_archive`` and ``keep_class_archive``). Commands that reach Kafka load more
    classes, so their archive is kept apart. None when the cache is not writable: the command then
    runs without one."""
    cache = cache_dir()
    stamp = [java_path, cp, *(str(os.stat(p).st_mtime_ns) for p in cp.split(os.pathsep)[:1])]
    key = hashlib.sha256("\0".join(stamp).encode()).hexdigest()[:16]
    wanted = cache / f"ops-{key}{'-kafka' if kafka else ''}.jsa"
    for archive in (wanted, cache / f"ops-{key}-kafka.jsa"):
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"], None
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return [], None
    if not os.access(cache, os.W_OK):
        return [], None
    return [f"-XX:ArchiveClassesAtExit={pending_class_archive(wanted)}"], wanted


def run(command: str, request: dict[str, Any]) -> Any:
    """Runs one OpsMain command with ``request`` and returns its JSON answer; raises ``OpsError``
    with the JVM's message when it fails."""
    java_path, cp = java(), classpath()
    request = {**hadoop_settings(), **request}
    archive, made = _class_archive(java_path, cp, bool(request.get("bootstrapServers")))
    args = [
        java_path,
        # A short-lived tool: only the quick JIT tier, the simplest collector, no JVM log lines
        # (a class-data archive that does not fit is then skipped silently).
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-Xlog:disable",
        *archive,
        "-Dlog4j2.level=ERROR",
        "-cp",
        cp,
        MAIN_CLASS,
        command,
    ]
    # The request goes over stdin: it may hold passwords (kafkaOptions), and any local user
    # can read a process's arguments.
    done = subprocess.run(args, input=json.dumps(request), capture_output=True, text=True, check=False)
    if made is not None:
        pending = pending_class_archive(made)
        if done.returncode == 0 and pending.is_file():
            keep_class_archive(pending, made, [os.path.realpath(java_path), *cp.split(os.pathsep)])
        else:
            pending.unlink(missing_ok=True)
    if done.returncode != 0:
        raise OpsError(_error(done), done.returncode == 2)
    return json.loads(done.stdout)


def in_session(command: str, request: dict[str, Any]) -> Any | None:
    """``command``'s answer from the driver of the active classic SparkSession, with the session's
    Hadoop configuration (what the query itself reads its checkpoint with); None without one (no
    pyspark imported, no session, or a Spark Connect one): then :func:`run` answers.

    Example::

        in_session("describe", {"checkpoint": "/chk/q1"})   # None, or the JSON answer
    """
    import sys

    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    # The process's SparkContext, whichever thread made its session active (none over Spark Connect).
    sc = SparkContext._active_spark_context  # noqa: SLF001
    jvm = sc._jvm if sc is not None else None  # noqa: SLF001  (a classic session's py4j view of the driver)
    if sc is None or jvm is None:
        return None
    from py4j.protocol import Py4JJavaError

    try:
        conf = sc._jsc.hadoopConfiguration()  # noqa: SLF001
        return json.loads(jvm.streamctl.ops.OpsMain.answer(command, json.dumps(request), conf))
    except Py4JJavaError as e:
        # PySpark's conversion of the JVM error, which importing streamctl.errors wraps: as every
        # other entry point gets it.
        from pyspark.errors.exceptions import captured

        from streamctl.errors import StreamctlException

        converted = captured.convert_exception(e.java_exception)
        if not isinstance(converted, StreamctlException):
            raise
        raise converted from None


def _error(done: subprocess.CompletedProcess[str]) -> str:
    """The JVM's error, whole (its answer on stdout); the last line of stderr if it died first."""
    try:
        return str(json.loads(done.stdout)["error"])
    except (ValueError, KeyError, TypeError):
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"{MAIN_CLASS} exited with {done.returncode}"
