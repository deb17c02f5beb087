"""Putting streamctl on a SparkSession: its jars on ``spark.jars`` and its SQL procedures catalog.

The wheel carries a streamctl jar per Spark line (``streamctl-spark4.2_2.13.jar``; the one matching
the running pyspark is picked, see :mod:`streamctl._jars`) and the ``kafka-clients`` jar they were
built against (not relocated, so Kafka class names in ``kafka.*`` options work as written). A session must hold
exactly one kafka-clients: when it already gets one from Spark's own Kafka connector
(``spark-sql-kafka-0-10``), streamctl runs on that one (any 3.9.x or 4.x) and ours is left out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from streamctl import _jars
from streamctl._jars import CATALOG_CLASS, CATALOG_CONF

# No pyspark at import: `streamctl jars` answers for a cluster's Spark without one here, and a
# Spark Connect-only pyspark (pyspark-client) has no SparkContext.
if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Registered on every session that uses streamctl by the first streamctl source or sink; may also
# be set in spark.sql.streaming.streamingQueryListeners (it is then not registered twice).
LISTENER_CLASS = "streamctl.spark.StreamctlQueryListener"

# What in spark.jars.packages / spark.jars already brings kafka-clients to a session.
_KAFKA_PACKAGES = ("org.apache.spark:spark-sql-kafka-0-10_", "org.apache.kafka:kafka-clients:")
_KAFKA_CLIENTS_JAR = "kafka-clients-"

_Builder = TypeVar("_Builder", bound="SparkSession.Builder")


def jar_path(spark_version: str | None = None, scala: str | None = None) -> Path:
    """The streamctl jar carried inside this wheel for a Spark version (default: the installed
    pyspark's) and its Scala version (default: that Spark's); see :func:`jar_paths` for what a
    session needs.

    Example::

        streamctl.jar_path()   # .../site-packages/streamctl/jars/streamctl-spark4.3_2.13.jar
        streamctl.jar_path("4.1.3")   # .../streamctl-spark4.1_2.13.jar
    """
    return packaged_jar(Path(__file__).parent, "streamctl", spark_version, scala)


def kafka_clients_jar_path() -> Path:
    """The kafka-clients jar carried inside this wheel, the version streamctl was compiled against.

    Example::

        streamctl.kafka_clients_jar_path()   # .../site-packages/streamctl/jars/kafka-clients-4.3.1.jar
    """
    jars = sorted((Path(__file__).parent / "jars").glob(f"{_KAFKA_CLIENTS_JAR}*.jar"))
    if len(jars) != 1:
        raise FileNotFoundError(
            f"expected one kafka-clients jar in {Path(__file__).parent / 'jars'}, found {[j.name for j in jars]}: "
            "this installation is incomplete; install the streamctl wheel (./build.sh package builds one)"
        )
    return jars[0]


def jar_paths(*, kafka_clients: bool = True, spark_version: str | None = None, scala: str | None = None) -> list[Path]:
    """The jars a session needs for streamctl: the streamctl jar of its Spark line (:func:`jar_path`)
    and, unless ``kafka_clients`` is False (the session gets kafka-clients from
    ``spark-sql-kafka-0-10``), the kafka-clients jar. ``python -m streamctl jars`` prints them
    comma-separated, for ``spark-submit --jars``.

    Example::

        spark-submit --jars "$(python -m streamctl jars)" job.py
        spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \\
            --jars "$(python -m streamctl jars --without-kafka-clients)" job.py
    """
    return [jar_path(spark_version, scala), *([kafka_clients_jar_path()] if kafka_clients else [])]


def packaged_jar(
    package_dir: Path, distribution: str, spark_version: str | None = None, scala: str | None = None
) -> Path:
    """``<package_dir>/jars/<distribution>-spark<line>_<scala>.jar``, the jar the wheel
    ``distribution`` carries for a Spark version (default: the installed pyspark's); a Spark line
    without one, or a missing file, is an error saying so.

    Example::

        packaged_jar(Path(streamctl.__file__).parent, "streamctl")   # .../streamctl/jars/streamctl-spark4.3_2.13.jar
    """
    jar = package_dir / "jars" / _jars.jar_name(distribution, spark_version, scala)
    if not jar.is_file():
        raise FileNotFoundError(
            f"{distribution} jar not found at {jar}: this installation is incomplete; "
            f"install the {distribution} wheel (./build.sh package builds one)"
        )
    return jar


def configure_spark(builder: _Builder, *, kafka_clients: bool | None = None) -> _Builder:
    """Adds streamctl to a SparkSession builder and returns the builder.

    Appends streamctl's jars to ``spark.jars`` (keeping what the builder already has, or else what
    the session would have had without it: ``spark-defaults.conf``'s, or the running JVM's under
    ``spark-submit --jars``, which a builder's ``spark.jars`` would replace) and registers
    streamctl's SQL procedures as catalog ``streamctl`` (the Python helpers also register it
    themselves). Nothing else: the first streamctl source or sink of a session registers
    streamctl's query listener (``LISTENER_CLASS``) itself. ``kafka_clients``: whether to
    add the kafka-clients jar too; by default it is added unless the builder's ``spark.jars.packages``
    names ``spark-sql-kafka-0-10`` or ``kafka-clients``, or ``spark.jars`` (the builder's, or the
    one kept from outside it, above) holds a kafka-clients jar. Pass ``False`` when the session gets
    kafka-clients some other way (e.g. ``spark.jars.packages`` in ``spark-defaults.conf``, which is
    not read here).

    For a Spark Connect client (``builder.remote("sc://...")``) the jars must already be on the
    server (see the README, "Running on a cluster"); only the catalog is set. streamctl has no
    other session-wide settings: everything is an option of ``format("streamctl")``, per query.

    Example::

        spark = streamctl.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    options = builder._options  # noqa: SLF001  (pyspark keeps the builder's pending settings here)
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE") or ""
    # remote("local[...]") starts its server JVM in this process, from the builder's settings.
    if not remote.startswith("sc://"):
        if not options.get("spark.jars"):
            for jar in _jars_outside_builder():
                append_setting(builder, "spark.jars", jar)
        if kafka_clients is None:
            brought = _brings_kafka_clients(options.get("spark.jars.packages", ""), options.get("spark.jars", ""))
            kafka_clients = not brought
        for jar in jar_paths(kafka_clients=kafka_clients):
            append_setting(builder, "spark.jars", str(jar))
    # Spark 3.5 has no procedure catalogs (and its jar no StreamctlCatalog): the helpers use py4j there.
    if _jars.has(_jars.PROCEDURES, _jars.pyspark_version() or "4.0"):
        builder.config(CATALOG_CONF, CATALOG_CLASS)
    return builder


def _jars_outside_builder() -> list[str]:
    """The ``spark.jars`` a session gets other than from its builder, which a builder's value
    replaces: the JVM's own when spark-submit started it (``--jars``), else ``spark-defaults.conf``'s
    (pyspark hands the builder's settings to spark-submit as ``--conf``, which wins over that file)."""
    from pyspark import SparkConf, SparkContext

    if os.environ.get("PYSPARK_GATEWAY_PORT") or SparkContext._jvm is not None:  # noqa: SLF001
        SparkContext._ensure_initialized()  # noqa: SLF001  (connects to that JVM; starts none)
        value = SparkConf().get("spark.jars", "") or ""
    else:
        value = _jars.spark_defaults().get("spark.jars", "")
    return [j.strip() for j in value.split(",") if j.strip()]


def _brings_kafka_clients(packages: str, jars: str) -> bool:
    coordinates = [p.strip() for p in packages.split(",")]
    return any(c.startswith(_KAFKA_PACKAGES) for c in coordinates) or any(
        Path(j.strip()).name.startswith(_KAFKA_CLIENTS_JAR) for j in jars.split(",")
    )


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
