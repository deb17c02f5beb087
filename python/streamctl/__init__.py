"""streamctl: Samza-style stream control for PySpark Structured Streaming over Kafka.

Example::

    from pyspark.sql import SparkSession
    import streamctl

    spark = streamctl.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    df = (spark.readStream.format("streamctl")
          .options(**streamctl.options.source("127.0.0.1:9092", ["orders"]))
          .load())
"""

from streamctl import options
from streamctl.config import LISTENER_CLASS, configure_spark, jar_path
from streamctl.control import end_of_stream, with_upstream_watermark
from streamctl.errors import StreamctlException
from streamctl.locality import describe_locality, live_executors
from streamctl.startpoints import Startpoint, StartpointManager
from streamctl.tasks import TaskRow, describe_tasks

__version__ = "0.1.0"

__all__ = [
    "LISTENER_CLASS",
    "Startpoint",
    "StartpointManager",
    "StreamctlException",
    "TaskRow",
    "__version__",
    "configure_spark",
    "describe_locality",
    "describe_tasks",
    "end_of_stream",
    "jar_path",
    "live_executors",
    "options",
    "with_upstream_watermark",
]
