"""Installing streamctl where a cluster already has its pyspark: pip adds streamctl and changes nothing else,
with or without the ``pyspark`` extra, and streamctl checks the running pyspark.

Runs pip in the venv of the other supported pyspark that ./build.sh test creates
(``STREAMCTL_OTHER_PYSPARK_VENV``); its pyspark stands for the cluster's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

DIST = Path(__file__).resolve().parent.parent / "dist"
VENV = os.environ.get("STREAMCTL_OTHER_PYSPARK_VENV")

needs_venv = pytest.mark.skipif(not VENV, reason="./build.sh test sets STREAMCTL_OTHER_PYSPARK_VENV")


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(VENV or "") / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _installed() -> dict[str, str]:
    """Every distribution in the venv (pip, setuptools too) and its version, as ``pip list`` says."""
    done = _pip("list", "--format=json")
    assert done.returncode == 0, done.stderr
    return {d["name"]: d["version"] for d in json.loads(done.stdout)}


@needs_venv
@pytest.mark.parametrize("extra", ["", "[pyspark]"])
def test_installing_the_wheel_keeps_the_pyspark_already_there(extra):
    wheel = next(DIST.glob("streamctl-0.1.0-*.whl"))
    assert _pip("uninstall", "-y", "streamctl").returncode == 0
    before = _installed()
    assert "pyspark" in before

    # No index: whatever pip would want to download (a pinned pyspark, pyarrow) fails the install.
    done = _pip("install", "--no-index", f"{wheel}{extra}")
    assert done.returncode == 0, done.stdout + done.stderr

    after = _installed()
    assert after.pop("streamctl") == "0.1.0"
    assert after == before


@needs_venv
def test_import_refuses_a_pyspark_outside_the_supported_range(tmp_path):
    """The check reads the range from the installed wheel's metadata; a fake newer pyspark first on
    the path stands for an unsupported cluster."""
    fake = tmp_path / "pyspark"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '5.0.0'\n")
    python = str(Path(VENV or "") / "bin" / "python")
    # `import streamctl` alone imports no pyspark (the console script stays fast): the check runs at
    # import when pyspark is already loaded, otherwise at the first Spark-side name.
    for code in ("import pyspark, streamctl", "from streamctl import StartpointManager"):
        done = subprocess.run(
            [python, "-c", code],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )  # fmt: skip
        assert done.returncode == 1, code
        last = done.stderr.strip().splitlines()[-1]
        want = "ImportError: streamctl 0.1.0 supports pyspark <4.4,>=3.5; this Python has pyspark 5.0.0"
        assert last.startswith(want), code


_SESSION_JARS = """
import streamctl
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
spark = streamctl.configure_spark(builder).getOrCreate()
print("spark.jars=" + spark.sparkContext.getConf().get("spark.jars"))
spark.stop()
"""


@pytest.mark.parametrize("given_by", ["spark-defaults.conf", "spark-submit --jars"])
def test_configure_spark_keeps_the_jars_the_session_gets_elsewhere(tmp_path, given_by):
    """A builder's ``spark.jars`` replaces spark-defaults.conf's and spark-submit's ``--jars``: the
    user's own jars would never reach the executors unless configure_spark keeps them."""
    extra = tmp_path / "udfs.jar"
    with zipfile.ZipFile(extra, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    job = tmp_path / "job.py"
    job.write_text(_SESSION_JARS)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    if given_by == "spark-defaults.conf":
        (tmp_path / "conf").mkdir()
        (tmp_path / "conf" / "spark-defaults.conf").write_text(f"spark.master local[1]\nspark.jars {extra}\n")
        command = [sys.executable, str(job)]
        env["SPARK_CONF_DIR"] = str(tmp_path / "conf")
    else:
        command = [str(Path(sys.executable).parent / "spark-submit"), "--jars", str(extra), str(job)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("spark.jars=")]
    jars = [Path(j.removeprefix("file:")).name for j in line.removeprefix("spark.jars=").split(",")]
    assert "udfs.jar" in jars, line
    assert any(j.startswith("streamctl-spark") for j in jars), line


def _python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, **env},
    )  # fmt: skip


def test_the_jars_command_needs_no_pyspark(tmp_path):
    """`streamctl jars --spark-version V` answers for a cluster's Spark, which need not be this
    Python's: a pyspark that cannot be imported (here one that fails as a missing one does) is
    never imported."""
    import pyspark

    fake = tmp_path / "no-pyspark" / "pyspark"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pyspark'\", name='pyspark')\n")
    line = ".".join(pyspark.__version__.split(".")[:2])
    done = subprocess.run(
        [sys.executable, "-m", "streamctl", "jars", "--spark-version", pyspark.__version__],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(fake.parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"streamctl-spark{line}_" in done.stdout, done.stdout


def test_configure_spark_works_with_a_spark_connect_only_pyspark(tmp_path):
    """pyspark-client (Spark Connect only) has no SparkContext; a builder for a Connect server
    gets streamctl's catalog there as anywhere. PySpark's own switch makes this pyspark act as one."""
    code = (
        "import streamctl\n"
        "from pyspark.sql import SparkSession\n"
        "b = streamctl.configure_spark(SparkSession.builder.remote('sc://localhost:1'))\n"
        "print(b._options.get('spark.sql.catalog.streamctl'))\n"
    )
    done = _python(code, tmp_path, SPARK_SKIP_CONNECT_COMPAT_TESTS="1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "streamctl.spark.StreamctlCatalog"
