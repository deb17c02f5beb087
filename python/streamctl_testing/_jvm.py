"""The one place tooling reaches into the JVM: py4j's view of the driver's classes (classic sessions only;
the product reaches the JVM through SQL, see streamctl._procedures)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession


def jvm(spark: SparkSession) -> Any:
    """The py4j JVM view of the active driver; ``jvm(spark).streamctl`` is the streamctl package.

    pyspark exposes it only as a private attribute; keeping every use here means one line
    to change if pyspark ever moves it.
    """
    return spark.sparkContext._jvm  # noqa: SLF001
