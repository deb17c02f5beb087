"""Installing streamctl where a cluster already has its pyspark: pip adds streamctl and changes nothing else,
with or without the ``pyspark`` extra, and streamctl checks the running pyspark.

Runs pip in the venv of the other supported pyspark that ./build.sh test creates
(``STREAMCTL_OTHER_PYSPARK_VENV``); its pyspark stands for the cluster's.
"""

from __future__ import annotations

import json
import os
import subprocess
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
