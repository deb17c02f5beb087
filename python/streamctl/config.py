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
    jar = Path(__file__).parent / "jars" / "streamctl.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"streamctl jar not found at {jar}: this installation is incomplete; "
            "install the streamctl wheel (./build.sh package builds one)"
        )
    return jar


def configure_spark(builder: _Builder, **conf: str) -> _Builder:
    """Adds streamctl to a SparkSession builder and returns the builder.

    Appends the bundled jar to ``spark.jars`` and the streamctl listener to
    ``spark.sql.streaming.streamingQueryListeners`` (keeping whatever the builder or
    ``spark-defaults.conf`` already set). Keyword arguments become ``spark.streamctl.*``
    settings.

    Example::

        spark = streamctl.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    _append(builder, "spark.jars", str(jar_path()))
    _append(builder, "spark.sql.streaming.streamingQueryListeners", LISTENER_CLASS)
    for key, value in conf.items():
        builder.config(f"spark.streamctl.{key.replace('_', '.')}", value)
    return builder


def _append(builder: SparkSession.Builder, key: str, value: str) -> None:
    # Builder._options is where pyspark keeps pending settings; reading it keeps the
    # user's own jars/listeners instead of overwriting them.
    current = builder._options.get(key, "")  # noqa: SLF001
    items = [item for item in current.split(",") if item]
    if value not in items:
        items.append(value)
    builder.config(key, ",".join(items))
