"""streamctl: Samza-style stream control for PySpark Structured Streaming over Kafka.

Example::

    from pyspark.sql import SparkSession
    import streamctl

    spark = streamctl.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    df = (spark.readStream.format("streamctl")
          .options(**streamctl.options.source("127.0.0.1:9092", ["orders"]))
          .load())
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__version__ = "0.1.0"

# Where each public name lives. Loaded on first use (PEP 562), so that the `streamctl` command
# answers --help and usage errors without importing pyspark, which takes seconds.
_EXPORTS = {
    "LISTENER_CLASS": "streamctl.config",
    "configure_spark": "streamctl.config",
    "jar_path": "streamctl.config",
    "jar_paths": "streamctl.config",
    "kafka_clients_jar_path": "streamctl.config",
    "end_of_stream": "streamctl.control",
    "with_upstream_watermark": "streamctl.control",
    "StreamctlException": "streamctl.errors",
    "describe_locality": "streamctl.locality",
    "live_executors": "streamctl.locality",
    "Startpoint": "streamctl.startpoints",
    "StartpointManager": "streamctl.startpoints",
    "TaskRow": "streamctl.tasks",
    "describe_tasks": "streamctl.tasks",
    "describe": "streamctl.description",
    "QueryDescription": "streamctl.description",
}

__all__ = [
    "LISTENER_CLASS",
    "QueryDescription",
    "Startpoint",
    "StartpointManager",
    "StreamctlException",
    "TaskRow",
    "__version__",
    "configure_spark",
    "describe",
    "describe_locality",
    "describe_tasks",
    "end_of_stream",
    "jar_path",
    "jar_paths",
    "kafka_clients_jar_path",
    "live_executors",
    "options",
    "with_upstream_watermark",
]


# Names that work without pyspark (the operator commands run a plain JVM). Not `options`: its
# errors are StreamctlException, a pyspark exception, and it builds options for Spark's readers.
_WITHOUT_SPARK = {"describe", "QueryDescription"}


def _spark_side() -> None:
    # The one check of the running pyspark (ImportError naming both versions when it is outside
    # the supported range) and the one conversion of JVM errors to streamctl.StreamctlException
    # (installed into PySpark's classic and Connect converters). Both need pyspark, so they run
    # when a Spark-side name is first used, or at import when pyspark is already loaded.
    importlib.import_module("streamctl._spark_version")
    importlib.import_module("streamctl.errors")


if "pyspark" in sys.modules:
    _spark_side()


def __getattr__(name: str) -> Any:
    known = name in _EXPORTS or name == "options"
    if known and (name not in _WITHOUT_SPARK or "pyspark" in sys.modules):
        _spark_side()
    if name == "options":
        return importlib.import_module("streamctl.options")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'streamctl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
