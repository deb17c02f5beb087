"""Fetch a set of jars once with Maven (``dependency:copy-dependencies`` of a small pom) into a
cache directory, atomically: an interrupted fetch never leaves a directory that looks complete.

Used for the Kafka broker (:mod:`streamctl_testing._kafka_jars`) and Spark's own Kafka connector
(:mod:`streamctl_testing.spark_kafka`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from streamctl import _ops
from streamctl_testing._proc import spawn


def jars_dir(variable: str, name: str, env: Mapping[str, str] | None = None) -> Path:
    """Where a set of jars is (or will be fetched): ``$variable`` when set, else ``name`` in
    streamctl's cache directory (``streamctl._ops.cache_dir``).

    Example::

        >>> jars_dir("STREAMCTL_KAFKA_LIB", "kafka-4.3.1/lib", {"XDG_CACHE_HOME": "/var/cache"})
        PosixPath('/var/cache/streamctl/kafka-4.3.1/lib')
    """
    env = os.environ if env is None else env
    explicit = env.get(variable)
    return Path(explicit).expanduser() if explicit else _ops.cache_dir(env) / name


def fetch_once(
    pom: Path,
    lib_dir: Path,
    marker: str,
    what: str,
    error: type[Exception],
    *,
    env_hint: str,
    settings: Path | None = None,
    properties: dict[str, str] | None = None,
) -> Path:
    """Return ``lib_dir`` holding the dependencies of ``pom``, fetching them with Maven if the
    ``marker`` jar is missing. ``what`` names them in messages, ``error`` is raised on failure,
    ``env_hint`` is the variable that points at a directory fetched elsewhere; ``settings``: a
    Maven settings file; ``properties``: -D settings of the pom (e.g. the version it fetches).

    The fetch downloads into a sibling temp directory and renames it into place.

    Example::

        fetch_once(pom, Path("~/.cache/x/lib"), "kafka_2.13-4.3.1.jar", "the broker jars", RuntimeError,
                   env_hint="STREAMCTL_KAFKA_LIB")
    """
    if (lib_dir / marker).is_file():
        return lib_dir
    mvn = shutil.which("mvn")
    if mvn is None:
        raise error(
            f"{what} are not in {lib_dir} and Maven "
            f"(mvn) is not on PATH to fetch them. Install Maven and retry, or run "
            f"'mvn dependency:copy-dependencies -f {pom} -DoutputDirectory=<dir>' "
            f"on a machine that has it and set {env_hint}=<dir>."
        )
    print(f"fetching {what} from Maven Central...", file=sys.stderr, flush=True)
    lib_dir.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_fetches(lib_dir)
    # Same parent as the target so the final rename is atomic (same filesystem).
    prefix = f"{_partial_prefix(lib_dir)}{os.getpid()}-"
    partial = Path(tempfile.mkdtemp(prefix=prefix, dir=lib_dir.parent))
    try:
        _run_maven(mvn, pom, settings, partial, marker, what, error, properties or {})
        # mkdtemp makes it private; the cache is plain readable files.
        partial.chmod(0o755)
        try:
            partial.rename(lib_dir)
        except OSError as exc:
            # Another process may have finished first (target exists, not empty).
            if not (lib_dir / marker).is_file():
                raise error(f"{lib_dir} exists but holds no {what}; empty or remove it and retry") from exc
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


def _run_maven(
    mvn: str,
    pom: Path,
    settings: Path | None,
    out_dir: Path,
    marker: str,
    what: str,
    error: type[Exception],
    properties: dict[str, str],
) -> None:
    cmd = [
        mvn, "-q", "-B", "-Dstyle.color=never", *(["-s", str(settings)] if settings else []), "-f", str(pom),
        *(f"-D{k}={v}" for k, v in properties.items()),
        "dependency:copy-dependencies", f"-DoutputDirectory={out_dir}",
    ]  # fmt: skip
    # Maven dies with us, so a killed fetch cannot keep writing into a stale temp dir.
    proc = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate()
    if proc.returncode != 0 or not (out_dir / marker).is_file():
        tail = "\n".join(output.strip().splitlines()[-20:])
        raise error(f"fetching {what} failed (mvn exit code {proc.returncode}); is Maven Central reachable?\n{tail}")
