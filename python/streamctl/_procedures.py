"""The one way Python reaches streamctl's JVM side: ``CALL streamctl.system.<procedure>(...)``, SQL
that runs the same in a classic session and over Spark Connect (see the JVM's
``streamctl.spark.StreamctlCatalog``). Spark 3.5 has no ``CALL`` (DataSource V2 procedures came in
4.0): there a classic session runs the same JVM procedure over py4j
(``streamctl.spark.ProcedureCalls``), and a Spark Connect session, which has no py4j, is refused
naming the Spark version and the helper. Errors come back as
:class:`~streamctl.errors.StreamctlException` (PySpark's conversion, wrapped once in
:mod:`streamctl.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession

from streamctl import _jars
from streamctl._jars import CATALOG, CATALOG_CLASS, CATALOG_CONF
from streamctl.errors import StreamctlException


def call(spark: SparkSession, procedure: str, **args: Any) -> DataFrame:
    """Runs ``CALL streamctl.system.<procedure>(name => value, ...)`` once (``None`` arguments are
    left out, so the procedure's default applies; a dict becomes a SQL map) and returns its result.
    Registers the catalog on the session first when it is not. On a Spark without ``CALL`` (3.5), a
    classic session calls the procedure over py4j; Spark Connect is refused (:class:`~streamctl._jars.SparkLineError`).

    Example::

        call(spark, "describe_tasks", checkpoint="/chk/q1").collect()
    """
    version = spark.version
    if not _jars.has(_jars.PROCEDURES, version):
        jvm_session = getattr(spark, "_jsparkSession", None)  # a classic session's; Connect has none
        if jvm_session is None:
            _jars.require(
                _jars.PROCEDURES,
                version,
                f"{procedure}: use a classic SparkSession, where the helpers work on Spark {_jars.line(version)}",
            )
        return _call_jvm(spark, jvm_session, procedure, args)
    values: dict[str, Any] = {}
    named = []
    for name, value in args.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            markers = []
            for i, (k, v) in enumerate(value.items()):
                values[f"p_{name}_k{i}"], values[f"p_{name}_v{i}"] = str(k), str(v)
                markers += [f":p_{name}_k{i}", f":p_{name}_v{i}"]
            named.append(f"`{name}` => map({', '.join(markers)})")
        else:
            # Values travel as parameters, never spliced into the text; names are quoted (`type`,
            # `offset` and `timestamp` are SQL keywords).
            values[f"p_{name}"] = value
            named.append(f"`{name}` => :p_{name}")
    _register(spark)
    return spark.sql(f"CALL {CATALOG}.system.{procedure}({', '.join(named)})", args=values)


def _call_jvm(spark: SparkSession, jvm_session: Any, procedure: str, args: Mapping[str, Any]) -> DataFrame:
    """The procedure run by the JVM code ``CALL`` runs, over py4j (PySpark converts dicts to Java maps)."""
    given = {
        name: dict(value) if isinstance(value, Mapping) else value for name, value in args.items() if value is not None
    }
    jvm = spark.sparkContext._jvm  # noqa: SLF001  (a classic session's py4j view of the driver)
    return DataFrame(jvm.streamctl.spark.ProcedureCalls.call(jvm_session, procedure, given), spark)


def rows(spark: SparkSession, procedure: str, **args: Any) -> list[Row]:
    """:func:`call`, collected."""
    return call(spark, procedure, **args).collect()


def _register(spark: SparkSession) -> None:
    current = spark.conf.get(CATALOG_CONF, None)
    if current is None:
        spark.conf.set(CATALOG_CONF, CATALOG_CLASS)
    elif current != CATALOG_CLASS:
        raise StreamctlException(
            f"Catalog '{CATALOG}' is taken: {CATALOG_CONF} is {current!r}, but streamctl's procedures need "
            f"{CATALOG_CLASS!r} there"
        )
