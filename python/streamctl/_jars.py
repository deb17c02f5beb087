"""Which of the wheel's jars matches a Spark: one streamctl jar per Spark line (and Scala version for
3.5), named ``<distribution>-spark<line>_<scala>.jar`` (``streamctl-spark4.2_2.13.jar``). Found
without importing pyspark (the ``streamctl`` command uses this too, and importing pyspark is slow):
the running Spark is the installed pyspark's version, its Scala the one of the ``spark-core`` jar it
carries (``$SPARK_HOME/jars`` first, where Spark runs from an installation).

Example::

    jar_name("streamctl")                                  # 'streamctl-spark4.3_2.13.jar' on pyspark 4.3.0
    jar_name("streamctl", spark_version="4.1.3")           # 'streamctl-spark4.1_2.13.jar'
"""

from __future__ import annotations

import importlib.util
import os
import re
import zipfile
from pathlib import Path

# Every Spark line the wheel carries a jar for, with its Scala versions (the first is the one
# PyPI's pyspark of that line ships, assumed when no Spark jars are at hand, e.g. pyspark-client).
LINES: dict[str, tuple[str, ...]] = {
    "3.5": ("2.12", "2.13"),
    "4.0": ("2.13",),
    "4.1": ("2.13",),
    "4.2": ("2.13",),
    "4.3": ("2.13",),
}

# The first Spark line that has each feature streamctl's Python layer refuses on older lines.
# The Python helpers run CALL where Spark has it; before, a classic session reaches the same JVM code
# over py4j, but over Spark Connect there is no other way.
PROCEDURES = (
    "DataSource V2 procedures (CALL streamctl.system.*), which streamctl's Python helpers run over Spark Connect"
)
SINCE = {
    PROCEDURES: "4.0",
}
# Where a session finds those procedures: the catalog setting and the jar's class (CALL streamctl.system.*).
CATALOG = "streamctl"
CATALOG_CONF = f"spark.sql.catalog.{CATALOG}"
CATALOG_CLASS = "streamctl.spark.StreamctlCatalog"


class SparkLineError(RuntimeError):
    """The running Spark lacks what was asked for; the message names the version and the feature."""


def pyspark_dir() -> Path | None:
    """The installed pyspark package's folder, without importing it."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _read_installed(path: Path) -> str:
    """A file of an installed package, also one inside a zip archive on ``sys.path``: spark-submit
    runs a job with ``$SPARK_HOME/python/lib/pyspark.zip`` there, ahead of any pip pyspark."""
    for archive in (path, *path.parents):
        if archive.is_file() and archive != path and zipfile.is_zipfile(archive):
            return zipfile.Path(archive, path.relative_to(archive).as_posix()).read_text(encoding="utf-8")
    return path.read_text(encoding="utf-8")


def pyspark_version() -> str | None:
    """The installed pyspark's version, read from its ``version.py`` (not imported)."""
    here = pyspark_dir()
    if here is None:
        return None
    try:
        text = _read_installed(here / "version.py")
    except (OSError, KeyError):
        return None
    found = re.search(r"""__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", text)
    return found.group(1) if found else None


def line(version: str) -> str:
    """``"4.2.1"`` -> ``"4.2"``."""
    found = re.match(r"(\d+)\.(\d+)", version)
    if not found:
        raise SparkLineError(f"Not a Spark version: {version!r}")
    return f"{found.group(1)}.{found.group(2)}"


def spark_jars_dir() -> Path | None:
    """Where the running Spark's jars are: ``$SPARK_HOME/jars``, else the pyspark wheel's ``jars``."""
    for candidate in (
        Path(os.environ["SPARK_HOME"]) / "jars" if os.environ.get("SPARK_HOME") else None,
        (pyspark_dir() or Path("/nonexistent")) / "jars",
    ):
        if candidate is not None and candidate.is_dir():
            return candidate
    return None


def spark_conf_dir() -> Path | None:
    """Spark's configuration directory, as spark-submit finds it: ``$SPARK_CONF_DIR``, else
    ``$SPARK_HOME/conf``; None when neither is set."""
    home = os.environ.get("SPARK_HOME")
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (str(Path(home) / "conf") if home else None)
    return Path(conf_dir) if conf_dir else None


def spark_defaults() -> dict[str, str]:
    """The settings of ``spark-defaults.conf`` in :func:`spark_conf_dir` (Java properties: ``key value``
    or ``key=value``), none when there is no such file.

    Example::

        spark_defaults().get("spark.jars", "")    # what spark-submit adds when no --jars says otherwise
    """
    conf_dir = spark_conf_dir()
    file = conf_dir / "spark-defaults.conf" if conf_dir else None
    if file is None or not file.is_file():
        return {}
    settings: dict[str, str] = {}
    for text in file.read_text(encoding="utf-8").splitlines():
        # The key ends at the first '=', ':' or blank; the value is the rest (a URI keeps its ':').
        if m := re.match(r"\s*([^=:\s#!][^=:\s]*)\s*[=:\s]\s*(.*)", text):
            settings[m[1]] = m[2].strip()
    return settings


def scala_version(spark_line: str) -> str:
    """The Scala version of the running Spark (from its ``spark-core_<scala>`` jar); the line's
    default (PyPI's) when no jars are at hand."""
    jars = spark_jars_dir()
    if jars is not None:
        for jar in sorted(jars.glob("spark-core_*.jar")):
            found = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
            if found:
                return found.group(1)
    return LINES.get(spark_line, ("2.13",))[0]


def jar_name(distribution: str, spark_version: str | None = None, scala: str | None = None) -> str:
    """The file name of ``distribution``'s jar for a Spark version (default: the installed pyspark's)
    and Scala version (default: that Spark's); an unsupported pair is an error naming both."""
    version = spark_version or pyspark_version()
    if version is None:
        raise SparkLineError(
            "pyspark is not installed, so streamctl cannot tell which Spark its jar is for: pass the "
            f"cluster's Spark version (python -m streamctl jars --spark-version 4.2.1); lines carried: {_carried()}"
        )
    spark_line = line(version)
    if spark_line not in LINES:
        raise SparkLineError(f"streamctl has no jar for Spark {version}: it carries jars for {_carried()}")
    # The installed Spark's Scala tells only about its own line; another line's is its default.
    installed = spark_version is None or (pyspark_version() or "").startswith(f"{spark_line}.")
    scala = scala or (scala_version(spark_line) if installed else LINES[spark_line][0])
    if scala not in LINES[spark_line]:
        raise SparkLineError(
            f"streamctl has no jar for Spark {version} with Scala {scala}: it carries jars for {_carried()}"
        )
    return f"{distribution}-spark{spark_line}_{scala}.jar"


def has(feature: str, spark_version: str) -> bool:
    """Whether the line of ``spark_version`` has ``feature`` (a key of :data:`SINCE`).

    Example::

        has(PROCEDURES, "3.5.9")   # False
    """
    return _key(line(spark_version)) >= _key(SINCE[feature])


def require(feature: str, spark_version: str, detail: str = "") -> None:
    """Raises :class:`SparkLineError` naming the Spark version and the feature when the line of
    ``spark_version`` is older than the first one that has ``feature`` (a key of :data:`SINCE`);
    ``detail`` ends the message (what was asked for, what works instead).

    Example::

        require(PROCEDURES, "3.5.9")   # SparkLineError: Spark 3.5.9 cannot run DataSource V2 procedures ...
    """
    if not has(feature, spark_version):
        raise SparkLineError(
            f"Spark {spark_version} cannot run {feature}: it needs Spark {SINCE[feature]} or later"
            + (f" ({detail})" if detail else "")
        )


def _key(spark_line: str) -> tuple[int, ...]:
    return tuple(int(p) for p in spark_line.split("."))


def _carried() -> str:
    return ", ".join(f"Spark {k} (Scala {' and '.join(v)})" for k, v in LINES.items())
