"""A real Kafka broker with the security a cluster has: SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
and TLS with client certificates, made at start with ``keytool``.

Example::

    from streamctl_testing.secured_broker import SecuredKafkaBroker

    with SecuredKafkaBroker() as broker:
        df = (spark.readStream.format("streamctl")
              .options(**broker.client_options("SCRAM-SHA-512"))
              .option("subscribe", "orders").load())

    # With Kafka's authorizer: USER may do only what it is granted.
    with SecuredKafkaBroker(authorizer=True) as broker:
        broker.grant(Acl("TOPIC", "orders", "READ"), Acl("GROUP", "readers", "READ", prefixed=True))
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from streamctl_testing.broker import BrokerError, KafkaBroker, _free_port, _java

__all__ = ["MECHANISMS", "PASSWORD", "USER", "Acl", "SecuredKafkaBroker"]

USER = "streamctl-user"
PASSWORD = "streamctl-secret"
# What client_options accepts: a SASL mechanism, or "SSL" (TLS with a client certificate).
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "SSL")
_SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
_STORE_PASSWORD = "streamctl-store"
_HOST = "127.0.0.1"
# The principals of the plain and controller listeners (the broker's own traffic and test tooling)
# and of the SSL listener's client certificate: everyone but USER, unchecked by the authorizer.
_SUPER_USERS = ("User:ANONYMOUS", "User:CN=client")

# Kafka's own class names, as users write them.
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


class Acl(NamedTuple):
    """One permission, with Kafka's names: ``operation`` (``"READ"``, ``"WRITE"``, ``"DESCRIBE"``,
    ``"DESCRIBE_CONFIGS"``, ...) on the ``resource`` (``"TOPIC"``, ``"GROUP"``,
    ``"TRANSACTIONAL_ID"``, ``"CLUSTER"``, whose name is ``"kafka-cluster"``) called ``name``, or
    with ``prefixed`` on every one whose name starts with it.

    Example::

        Acl("TRANSACTIONAL_ID", "streamctl", "WRITE", prefixed=True)
    """

    resource: str
    name: str
    operation: str
    prefixed: bool = False


class SecuredKafkaBroker(KafkaBroker):
    """A :class:`KafkaBroker` that also serves a ``SASL_PLAINTEXT`` listener (user ``USER``,
    password ``PASSWORD``, for PLAIN and both SCRAM mechanisms) and an ``SSL`` listener that
    requires a client certificate. The plain listener stays for the broker's own traffic and for
    test tooling. Certificates (a broker key with subject alternative name IP 127.0.0.1, a client
    key, a truststore for each side) are made by ``keytool`` once per process and copied into the
    broker's temp dir.

    ``authorizer=True`` turns on Kafka's ``StandardAuthorizer``: then ``USER`` may do only what
    :meth:`grant` allows it, while the broker's own principals and the plain and SSL listeners'
    stay unchecked (``super.users``). Off by default.

    Example::

        with SecuredKafkaBroker() as broker:
            broker.client_options("SSL")["kafka.security.protocol"]   # "SSL"
    """

    _sasl_port = 0
    _ssl_port = 0

    def __init__(
        self,
        port: int | None = None,
        *,
        authorizer: bool = False,
        properties: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        if authorizer:
            properties = {
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users": ";".join(_SUPER_USERS),
                **(properties or {}),
            }
        super().__init__(port, properties=properties, **kwargs)
        self._authorizer = authorizer

    def grant(self, *acls: Acl, principal: str = f"User:{USER}") -> None:
        """Allows ``principal`` (by default the SASL user) ``acls``, from any host; returns once the
        broker's authorizer applies them. For a broker started with ``authorizer=True``.

        Example::

            broker.grant(Acl("TOPIC", "orders", "WRITE"), Acl("CLUSTER", "kafka-cluster", "DESCRIBE_CONFIGS"))
        """
        if not self._authorizer:
            raise BrokerError("grant needs a broker started with authorizer=True")
        if not acls:
            return
        source = Path(__file__).with_name("GrantAcls.java")
        args = [f for a in acls for f in (a.resource, "PREFIXED" if a.prefixed else "LITERAL", a.name, a.operation)]
        self._run_tool(f"granting {principal} {len(acls)} ACLs", str(source), self.bootstrap_servers, principal, *args)

    @property
    def sasl_servers(self) -> str:
        """``127.0.0.1:PORT`` of the SASL_PLAINTEXT listener."""
        return f"{_HOST}:{self._sasl_port}"

    @property
    def ssl_servers(self) -> str:
        """``127.0.0.1:PORT`` of the SSL listener."""
        return f"{_HOST}:{self._ssl_port}"

    def client_options(self, mechanism: str, *, with_credentials: bool = True) -> dict[str, str]:
        """The ``kafka.*`` options of a streamctl (or Spark Kafka) source or sink reaching this
        broker with ``mechanism`` (one of :data:`MECHANISMS`), with Kafka's own class names.
        ``with_credentials=False`` leaves the username and password out of the JAAS config (for a
        callback handler that supplies them).

        Example::

            broker.client_options("PLAIN")["kafka.sasl.jaas.config"]
            # 'org.apache.kafka.common.security.plain.PlainLoginModule required username="..." password="...";'
        """
        if mechanism == "SSL":
            store = self._stores
            return {
                "kafka.bootstrap.servers": self.ssl_servers,
                "kafka.security.protocol": "SSL",
                "kafka.ssl.truststore.location": str(store / "client-trust.p12"),
                "kafka.ssl.truststore.password": _STORE_PASSWORD,
                "kafka.ssl.truststore.type": "PKCS12",
                "kafka.ssl.keystore.location": str(store / "client.p12"),
                "kafka.ssl.keystore.password": _STORE_PASSWORD,
                "kafka.ssl.keystore.type": "PKCS12",
            }
        if mechanism not in _LOGIN_MODULES:
            raise ValueError(f"mechanism must be one of {', '.join(MECHANISMS)}, not {mechanism!r}")
        credentials = f' username="{USER}" password="{PASSWORD}"' if with_credentials else ""
        return {
            "kafka.bootstrap.servers": self.sasl_servers,
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": mechanism,
            "kafka.sasl.jaas.config": f"{_LOGIN_MODULES[mechanism]} required{credentials};",
        }

    # -- hooks of KafkaBroker -------------------------------------------------

    @property
    def _stores(self) -> Path:
        return self.work_dir / "tls"

    def _pick_ports(self) -> None:
        super()._pick_ports()
        self._sasl_port = _free_port(avoid=(self._port, self._controller_port))
        self._ssl_port = _free_port(avoid=(self._port, self._controller_port, self._sasl_port))

    def _write_config(self) -> None:
        if not self._stores.is_dir():
            shutil.copytree(_shared_stores(), self._stores)
        listeners = {
            "PLAINTEXT": self._port,
            "SASL_PLAINTEXT": self._sasl_port,
            "SSL": self._ssl_port,
        }
        served = ",".join(f"{name}://{_HOST}:{port}" for name, port in listeners.items())
        store = self._stores
        self._extra.update(
            {
                "listeners": f"{served},CONTROLLER://{_HOST}:{self._controller_port}",
                "advertised.listeners": served,
                "listener.security.protocol.map": (
                    "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL"
                ),
                "sasl.enabled.mechanisms": ",".join(_LOGIN_MODULES),
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                    f'{_LOGIN_MODULES["PLAIN"]} required user_{USER}="{PASSWORD}";'
                ),
                **{
                    f"listener.name.sasl_plaintext.{m.lower()}.sasl.jaas.config": f"{_LOGIN_MODULES[m]} required;"
                    for m in _SCRAM
                },
                "listener.name.ssl.ssl.keystore.location": str(store / "broker.p12"),
                "listener.name.ssl.ssl.keystore.password": _STORE_PASSWORD,
                "listener.name.ssl.ssl.keystore.type": "PKCS12",
                "listener.name.ssl.ssl.truststore.location": str(store / "broker-trust.p12"),
                "listener.name.ssl.ssl.truststore.password": _STORE_PASSWORD,
                "listener.name.ssl.ssl.truststore.type": "PKCS12",
                "listener.name.ssl.ssl.client.auth": "required",
            }
        )
        super()._write_config()

    def _format_args(self) -> list[str]:
        # SCRAM users live in the cluster metadata; in KRaft they can be created with the storage.
        return [arg for m in _SCRAM for arg in ("--add-scram", f"{m}=[name={USER},password={PASSWORD}]")]


_stores_made: Path | None = None


def _shared_stores() -> Path:
    """The certificates of every secured broker this process starts, made once (``keytool`` takes
    seconds: six JVMs and two RSA keys) and removed at exit; each broker serves a copy of its own."""
    global _stores_made
    if _stores_made is None or not _stores_made.is_dir():
        top = Path(tempfile.mkdtemp(prefix="streamctl-tls-"))
        atexit.register(shutil.rmtree, top, ignore_errors=True)
        _make_stores(top / "tls")
        _stores_made = top / "tls"
    return _stores_made


def _make_stores(directory: Path) -> None:
    """A key pair for the broker (valid for IP 127.0.0.1) and one for the client, each trusting
    the other's self-signed certificate."""
    keytool = str(Path(_java()).parent / "keytool")
    if not Path(keytool).is_file():
        keytool = shutil.which("keytool") or ""
    if not keytool:
        raise BrokerError("no 'keytool' next to java or on PATH to make the TLS certificates")
    directory.mkdir(parents=True)

    def run(*args: str) -> None:
        done = subprocess.run([keytool, *args], cwd=directory, capture_output=True, text=True)
        if done.returncode != 0:
            raise BrokerError(f"keytool {args[0]} failed: {done.stdout}{done.stderr}")

    common = ["-storetype", "PKCS12", "-storepass", _STORE_PASSWORD]
    subjects = {"broker": ["-dname", f"CN={_HOST}", "-ext", f"SAN=IP:{_HOST}"], "client": ["-dname", "CN=client"]}
    for name, extra in subjects.items():
        run("-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048", "-validity", "7",
            "-keystore", f"{name}.p12", "-keypass", _STORE_PASSWORD, *common, *extra)  # fmt: skip
        run("-exportcert", "-alias", name, "-keystore", f"{name}.p12", "-file", f"{name}.crt", *common)
    for trusting, trusted in (("broker", "client"), ("client", "broker")):
        run("-importcert", "-noprompt", "-alias", trusted, "-file", f"{trusted}.crt",
            "-keystore", f"{trusting}-trust.p12", *common)  # fmt: skip
