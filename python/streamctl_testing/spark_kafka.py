"""Spark's own Kafka connector of the running Spark line (``spark-sql-kafka-0-10`` from Maven Central,
with the kafka-clients it depends on: 4.2.0 and 3.9.2 on Spark 4.3 and 4.2, whose 4.3.0 is not on
Maven Central), fetched once, for tests and benchmarks that run ``format("kafka")`` beside
``format("streamctl")``.

Example::

    from streamctl_testing.spark_kafka import spark_kafka_jars

    builder.config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    spark = streamctl.configure_spark(builder).getOrCreate()   # leaves streamctl's kafka-clients out
"""

from __future__ import annotations

from pathlib import Path

from streamctl._jars import line, pyspark_version, scala_version
from streamctl_testing._maven_fetch import fetch_once, jars_dir

# Per Spark line: the connector's version and the kafka-clients it brings (Spark's own pom says which).
# 3.5.0: the newest 3.5 connector the reachable Maven Central mirror has (same kafka-clients as 3.5.8).
CONNECTORS = {
    "4.3": ("4.2.0", "3.9.2"),
    "4.2": ("4.2.0", "3.9.2"),
    "4.1": ("4.1.3", "3.9.1"),
    "4.0": ("4.0.4", "3.9.1"),
    "3.5": ("3.5.0", "3.4.1"),
}
_LINE = line(pyspark_version() or "4.3")
SPARK_KAFKA_VERSION, KAFKA_CLIENTS_VERSION = CONNECTORS[_LINE]
# The connector's Scala: the running Spark's (3.5 has two).
_SCALA = scala_version(_LINE)
# Its delegation-token helper: the mirror has 4.0.0 but not 4.2.0 (unchanged since 4.0); 3.5's own on 3.5.
_TOKEN_PROVIDER_VERSION = SPARK_KAFKA_VERSION if _LINE == "3.5" else "4.0.0"
SPARK_KAFKA_LIB_ENV = "STREAMCTL_SPARK_KAFKA_LIB"

_POM_DIR = Path(__file__).resolve().parent / "kafka_connector"
_MARKER_JAR = f"spark-sql-kafka-0-10_{_SCALA}-{SPARK_KAFKA_VERSION}.jar"


def spark_kafka_jars() -> list[Path]:
    """The connector's jars (kafka-clients included), fetched with Maven on first use into
    ``$STREAMCTL_SPARK_KAFKA_LIB`` or ``${XDG_CACHE_HOME:-~/.cache}/streamctl/spark-sql-kafka-<version>_<scala>``.

    Example::

        [j.name for j in spark_kafka_jars()]
        # [..., 'kafka-clients-3.9.2.jar', 'spark-sql-kafka-0-10_2.13-4.2.0.jar', ...]
    """
    lib = jars_dir(SPARK_KAFKA_LIB_ENV, f"spark-sql-kafka-{SPARK_KAFKA_VERSION}_{_SCALA}")
    fetch_once(
        _POM_DIR / "pom.xml",
        lib,
        _MARKER_JAR,
        f"Spark's Kafka connector (spark-sql-kafka-0-10 {SPARK_KAFKA_VERSION})",
        RuntimeError,
        env_hint=SPARK_KAFKA_LIB_ENV,
        settings=_POM_DIR / "settings.xml",
        properties={
            "spark.kafka.version": SPARK_KAFKA_VERSION,
            "scala.binary.version": _SCALA,
            "spark.token.provider.version": _TOKEN_PROVIDER_VERSION,
        },
    )
    return sorted(lib.glob("*.jar"))
