"""Locate, and fetch once, the jars of the Kafka broker used by demos and tests.

Public names are re-exported by :mod:`streamctl_testing.broker`; import them from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from streamctl_testing._maven_fetch import fetch_once, jars_dir

KAFKA_VERSION = "4.3.1"
KAFKA_LIB_ENV = "STREAMCTL_KAFKA_LIB"

# The broker's own jar: its presence is what "the jars are there" means.
_MARKER_JAR = f"kafka_2.13-{KAFKA_VERSION}.jar"
_POM = Path(__file__).resolve().parent / "kafka_broker" / "pom.xml"
_TOOLS_MARKER_JAR = f"kafka-tools-{KAFKA_VERSION}.jar"
_TOOLS_POM = Path(__file__).resolve().parent / "kafka_tools" / "pom.xml"


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
    return jars_dir(KAFKA_LIB_ENV, f"kafka-{KAFKA_VERSION}/lib", env)


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
    return fetch_once(
        _POM, lib_dir, _MARKER_JAR, f"the Kafka {KAFKA_VERSION} broker jars", BrokerError, env_hint=KAFKA_LIB_ENV
    )


def ensure_kafka_tools_jars() -> Path:
    """Return a directory with the jars of Kafka's command-line tools (``kafka-consumer-groups`` is
    ``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand``), fetched once with Maven into
    ``${XDG_CACHE_HOME:-~/.cache}/streamctl/kafka-4.3.1/tools``; run them with the broker's jars."""
    tools = kafka_lib_dir().parent / "tools"
    return fetch_once(
        _TOOLS_POM,
        tools,
        _TOOLS_MARKER_JAR,
        f"the Kafka {KAFKA_VERSION} tools jars",
        BrokerError,
        env_hint=KAFKA_LIB_ENV,
    )
