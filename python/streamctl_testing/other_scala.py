"""Spark built for another Scala version than the installed pyspark wheel carries (Spark 3.5 with
Scala 2.13, which PyPI does not have), for the smoke tests: the same Spark version's jars for that
Scala, fetched once from Maven Central (``spark_runtime/pom.xml``), replace the venv's
``pyspark/jars``, so pyspark's own Python code drives that build (and ``streamctl._jars`` picks the
streamctl jar of that Scala from the ``spark-core`` jar it finds there). Test tooling: ``build.sh``
runs it on the venv it makes for that line.

Example::

    .venv-pyspark-3.5.9-scala2.13/bin/python -m streamctl_testing.other_scala 2.13
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from streamctl._jars import pyspark_dir, pyspark_version
from streamctl_testing._maven_fetch import fetch_once, jars_dir

_POM = Path(__file__).resolve().parent / "spark_runtime" / "pom.xml"
_SETTINGS = Path(__file__).resolve().parent / "kafka_connector" / "settings.xml"
_LIB_ENV = "STREAMCTL_SPARK_RUNTIME_LIB"


def use_scala(scala: str) -> Path:
    """Makes the installed pyspark run Spark of its own version built for ``scala``; returns its
    ``jars`` folder. Does nothing when it already does."""
    here, version = pyspark_dir(), pyspark_version()
    if here is None or version is None:
        raise RuntimeError("pyspark is not installed in this Python")
    jars = here / "jars"
    marker = f"spark-core_{scala}-{version}.jar"
    if (jars / marker).is_file():
        return jars
    lib = fetch_once(
        _POM,
        jars_dir(_LIB_ENV, f"spark-{version}_{scala}"),
        marker,
        f"Spark {version}'s jars for Scala {scala}",
        RuntimeError,
        env_hint=_LIB_ENV,
        settings=_SETTINGS,
        properties={"spark.version": version, "scala.binary.version": scala},
    )
    # Copied, not linked: a test venv may outlive the cache (which the docs say how to empty).
    staged = here / "jars.staged"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(lib, staged)
    shutil.rmtree(jars)
    staged.rename(jars)
    return jars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scala", help="the Scala version of the Spark to run, e.g. 2.13")
    print(use_scala(parser.parse_args().scala))


if __name__ == "__main__":
    main()
