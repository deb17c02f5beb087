"""Locate, and fetch once, the jars of the Kafka broker used by demos and tests.

Public names are re-exported by :mod:`streamctl_testing.broker`; import them from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from streamctl_testing._proc import spawn

KAFKA_VERSION = "4.3.1"
KAFKA_LIB_ENV = "STREAMCTL_KAFKA_LIB"

# The broker's own jar: its presence is what "the jars are there" means.
_MARKER_JAR = f"kafka_2.13-{KAFKA_VERSION}.jar"
_POM = Path(__file__).resolve().parent / "kafka_broker" / "pom.xml"


class BrokerError(RuntimeError):
    """The embedded Kafka broker could not be fetched, started or stopped."""


def kafka_lib_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the directory that holds (or will hold) the broker's jars.

    ``$STREAMCTL_KAFKA_LIB`` when set, else
    ``${XDG_CACHE_HOME:-~/.cache}/streamctl/kafka-4.3.1/lib``.

    Example::

        >>> kafka_lib_dir({"STREAMCTL_KAFKA_LIB": "/opt/kafka/libs"})
        PosixPath('/opt/kafka/libs')
    """
    env = os.environ if env is None else env
    explicit = env.get(KAFKA_LIB_ENV)
    if explicit:
        return Path(explicit).expanduser()
    cache = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "streamctl" / f"kafka-{KAFKA_VERSION}" / "lib"


def has_kafka_jars(lib_dir: Path) -> bool:
    """Tell whether ``lib_dir`` holds a complete set of broker jars."""
    return (lib_dir / _MARKER_JAR).is_file()


def ensure_kafka_jars(lib_dir: Path | None = None) -> Path:
    """Return a directory with the broker's jars, fetching them with Maven if missing.

    The fetch downloads into a sibling temp directory and renames it into place,
    so an interrupted fetch never leaves a directory that looks complete.

    Example::

        >>> lib = ensure_kafka_jars()
        >>> (lib / "kafka_2.13-4.3.1.jar").is_file()
        True
    """
    lib_dir = kafka_lib_dir() if lib_dir is None else lib_dir
    if has_kafka_jars(lib_dir):
        return lib_dir
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BrokerError(
            f"the Kafka {KAFKA_VERSION} broker jars are not in {lib_dir} and Maven "
            f"(mvn) is not on PATH to fetch them. Install Maven and retry, or run "
            f"'mvn dependency:copy-dependencies -f {_POM} -DoutputDirectory=<dir>' "
            f"on a machine that has it and set {KAFKA_LIB_ENV}=<dir>."
        )
    print(
        f"fetching Kafka {KAFKA_VERSION} broker jars from Maven Central...",
        file=sys.stderr,
        flush=True,
    )
    lib_dir.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_fetches(lib_dir)
    # Same parent as the target so the final rename is atomic (same filesystem).
    prefix = f"{_partial_prefix(lib_dir)}{os.getpid()}-"
    partial = Path(tempfile.mkdtemp(prefix=prefix, dir=lib_dir.parent))
    try:
        _run_maven(mvn, partial)
        # mkdtemp makes it private; the cache is plain readable files.
        partial.chmod(0o755)
        try:
            partial.rename(lib_dir)
        except OSError as exc:
            # Another process may have finished first (target exists, not empty).
            if not has_kafka_jars(lib_dir):
                raise BrokerError(
                    f"{lib_dir} exists but holds no Kafka {KAFKA_VERSION} broker jars; "
                    f"empty or remove it and retry"
                ) from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return lib_dir


def _partial_prefix(lib_dir: Path) -> str:
    return f".{lib_dir.name}.partial-"


def _remove_abandoned_fetches(lib_dir: Path) -> None:
    # A fetch killed before its rename leaves its temp dir; the pid in the name
    # tells whether its owner is gone (a live owner may still be fetching).
    for partial in lib_dir.parent.glob(f"{_partial_prefix(lib_dir)}*"):
        owner = partial.name.removeprefix(_partial_prefix(lib_dir)).split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(partial, ignore_errors=True)


def _run_maven(mvn: str, out_dir: Path) -> None:
    cmd = [
        mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(_POM),
        "dependency:copy-dependencies", f"-DoutputDirectory={out_dir}",
    ]  # fmt: skip
    # Maven dies with us, so a killed fetch cannot keep writing into a stale temp dir.
    proc = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate()
    if proc.returncode != 0 or not has_kafka_jars(out_dir):
        tail = "\n".join(output.strip().splitlines()[-20:])
        raise BrokerError(
            f"fetching the Kafka {KAFKA_VERSION} broker jars failed "
            f"(mvn exit code {proc.returncode}); is Maven Central reachable?\n{tail}"
        )
