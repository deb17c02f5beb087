"""One wheel for every Spark line: it carries a jar per line (and Scala version) and picks the one of
the running pyspark; a line that lacks a feature is refused naming the Spark version and the
feature. Runs on every line (smoke): each checks that it gets its own jar."""

from __future__ import annotations

import subprocess
import sys

import pyspark
import pytest

import streamctl
import streamctl_testing
from streamctl import _jars

pytestmark = pytest.mark.smoke

RUNNING = _jars.line(pyspark.__version__)
SCALA = _jars.scala_version(RUNNING)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamctl", "jars", *args], capture_output=True, text=True, timeout=120
    )


def test_the_running_pyspark_gets_the_jars_of_its_own_line():
    assert streamctl.jar_path().name == f"streamctl-spark{RUNNING}_{SCALA}.jar"
    assert streamctl.jar_path().is_file()
    assert streamctl_testing.jar_path().name == f"streamctl-testing-spark{RUNNING}_{SCALA}.jar"
    assert streamctl_testing.jar_path().is_file()
    done = _cli()
    assert done.returncode == 0, done.stderr
    jars = done.stdout.strip().split(",")
    assert jars[0].rsplit("/", 1)[-1] == f"streamctl-spark{RUNNING}_{SCALA}.jar"
    assert jars[1].rsplit("/", 1)[-1].startswith("kafka-clients-")


@pytest.mark.parametrize("line", sorted(_jars.LINES))
def test_jars_for_another_spark_name_its_line(line):
    """`streamctl jars --spark-version` serves a Spark Connect server or cluster whose Spark is not
    this Python's."""
    done = _cli("--spark-version", f"{line}.1", "--without-kafka-clients")
    assert done.returncode == 0, done.stderr
    # The running line's Scala is the running Spark's; another line's, PyPI's pyspark's.
    scala = SCALA if line == RUNNING else _jars.LINES[line][0]
    assert done.stdout.strip().rsplit("/", 1)[-1] == f"streamctl-spark{line}_{scala}.jar"
    for other in _jars.LINES[line]:
        done = _cli("--spark-version", f"{line}.1", "--scala", other, "--without-kafka-clients")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().rsplit("/", 1)[-1] == f"streamctl-spark{line}_{other}.jar"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--spark-version", "3.4.1"], "streamctl has no jar for Spark 3.4.1: it carries jars for Spark 3.5 (Scala"),
        (["--spark-version", "4.2.1", "--scala", "2.12"], "streamctl has no jar for Spark 4.2.1 with Scala 2.12"),
    ],
)
def test_a_spark_without_a_jar_is_refused_naming_it(args, message):
    done = _cli(*args)
    assert done.returncode == 1
    assert done.stdout == ""
    assert message in done.stderr, done.stderr


def test_a_feature_a_line_lacks_is_refused_naming_the_version_and_the_feature():
    _jars.require(_jars.PROCEDURES, "4.0.0")
    with pytest.raises(
        _jars.SparkLineError, match=r"Spark 3\.5\.9 cannot run DataSource V2 procedures .* 4\.0 or later"
    ):
        _jars.require(_jars.PROCEDURES, "3.5.9")


def test_the_helpers_reach_the_jvm_in_a_classic_session_on_every_line(spark, tmp_path):
    """CALL where Spark has procedures; on 3.5, which has none, the same JVM procedures over py4j:
    results, typed arguments and errors come back alike."""
    cp = str(tmp_path / "cp")
    manager = streamctl.StartpointManager(spark, checkpoint=cp)
    assert manager.location == f"{cp}/streamctl"
    assert manager.list() == []
    with pytest.raises(streamctl.StreamctlException, match="No task mapping in the metadata store at ") as e:
        streamctl.describe_tasks(spark, checkpoint=cp)
    assert e.value.getCondition().startswith("STREAMCTL_")
    with pytest.raises(streamctl.StreamctlException, match="Give the query's checkpoint"):
        streamctl.describe_tasks(spark)
    # Only lines with procedures register the catalog (3.5's jar has no StreamctlCatalog).
    has_catalog = spark.conf.get("spark.sql.catalog.streamctl", None) is not None
    assert has_catalog == _jars.has(_jars.PROCEDURES, pyspark.__version__)
