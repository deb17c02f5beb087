"""Putting streamctl on a SparkSession: the jar on ``spark.jars`` and the listener registered."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pyspark.sql import SparkSession

LISTENER_CLASS = "streamctl.spark.StreamctlQueryListener"

_Builder = TypeVar("_Builder", bound=SparkSession.Builder)


def jar_path() -> Path:
    """The streamctl jar carried inside this wheel.

    Example::

        spark-submit --jars "$(python -c 'import streamctl; print(streamctl.jar_path())')" job.py
    """
    return packaged_jar(Path(__file__).parent, "streamctl")


def packaged_jar(package_dir: Path, distribution: str) -> Path:
    """``<package_dir>/jars/<distribution>.jar``, the jar the wheel ``distribution`` carries; a
    missing one is an error saying which wheel to install.

    Example::

        packaged_jar(Path(streamctl.__file__).parent, "streamctl")   # .../streamctl/jars/streamctl.jar
    """
    jar = package_dir / "jars" / f"{distribution}.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"{distribution} jar not found at {jar}: this installation is incomplete; "
            f"install the {distribution} wheel (./build.sh package builds one)"
        )
    return jar


def configure_spark(builder: _Builder) -> _Builder:
    """Adds streamctl to a SparkSession builder and returns the builder.

    Appends the bundled jar to ``spark.jars`` and the streamctl listener to
    ``spark.sql.streaming.streamingQueryListeners`` (keeping whatever the builder or
    ``spark-defaults.conf`` already set). streamctl has no session-wide settings: everything is
    an option of ``format("streamctl")``, per query.

    Example::

        spark = streamctl.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    append_setting(builder, "spark.jars", str(jar_path()))
    append_setting(builder, "spark.sql.streaming.streamingQueryListeners", LISTENER_CLASS)
    return builder


def append_setting(builder: SparkSession.Builder, key: str, value: str) -> None:
    """Appends ``value`` to the comma-separated list setting ``key`` of ``builder`` (e.g.
    ``spark.jars``), keeping what the builder already has and adding nothing twice.

    Example::

        append_setting(builder, "spark.jars", "/opt/jars/my-chooser.jar")
    """
    # Builder._options is where pyspark keeps pending settings; reading it keeps the
    # user's own jars/listeners instead of overwriting them.
    current = builder._options.get(key, "")  # noqa: SLF001
    items = [item for item in current.split(",") if item]
    if value not in items:
        items.append(value)
    builder.config(key, ",".join(items))
