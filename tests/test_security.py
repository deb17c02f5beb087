"""Secured Kafka as clusters run it: SASL/PLAIN, SCRAM and TLS with Kafka's own class names in
``kafka.*`` options, and third-party plugins compiled against plain ``org.apache.kafka`` interfaces
(streamctl's kafka-clients is not relocated, so their classes load and work as written)."""

from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamctl import StreamctlException, options
from streamctl_testing import kafka
from streamctl_testing.secured_broker import MECHANISMS, PASSWORD, USER, Acl, SecuredKafkaBroker

from conftest import driver_log, read_committed_values, wait_for

# Not in the other Spark lines' smoke set: what these tests exercise (streamctl's options and
# kafka-clients' security) is the same code on every line, and the secured broker is the costliest
# fixture in it. They run on 4.3 in the full suite.

HANDLER = "streamctl.testing.plugins.FileCredentialsCallbackHandler"
PARTITIONER = "streamctl.testing.plugins.LastBytePartitioner"

_names = itertools.count()


@pytest.fixture(scope="module")
def secured() -> Iterator[SecuredKafkaBroker]:
    with SecuredKafkaBroker(properties={"log.retention.ms": "-1"}) as broker:
        yield broker


def _streams(spark: SparkSession, broker: SecuredKafkaBroker, partitions: int) -> tuple[str, str]:
    """A fresh input and output stream, made over the broker's plain listener (test tooling)."""
    n = next(_names)
    src, dst = f"secured-src-{n}", f"secured-dst-{n}"
    for name in (src, dst):
        kafka.create_stream(spark, broker.bootstrap_servers, name, partitions)
    return src, dst


def _start_copy(
    spark: SparkSession, client: dict[str, str], src: str, dst: str, checkpoint: Path, **sink: str
) -> StreamingQuery:
    """Starts one job: the streamctl source reads ``src`` and the streamctl sink writes ``dst``, both
    with the ``client`` options (``sink``: more sink options), to the end of ``src``."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(client["kafka.bootstrap.servers"], [src], starting_offsets="earliest"))
        .options(**client)
        .load()
    )
    return (
        df.select("value")
        .writeStream.format("streamctl")
        .options(**options.sink(client["kafka.bootstrap.servers"], dst))
        .options(**client, **sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


def _copy(spark: SparkSession, client: dict[str, str], src: str, dst: str, checkpoint: Path, **sink: str) -> None:
    """:func:`_start_copy`, run to its end, which must come without an error."""
    q = _start_copy(spark, client, src, dst, checkpoint, **sink)
    assert q.awaitTermination(180), "the AvailableNow run did not finish"
    assert q.exception() is None, q.exception()


def _user_records(spark: SparkSession, broker: SecuredKafkaBroker, stream: str, partition: int) -> list[bytes]:
    # The sink writes plain records (no intermediate=true), read back over the plain listener.
    return kafka.read_raw(spark, broker.bootstrap_servers, stream, partition)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_job_reads_and_writes_through_a_secured_listener(spark, secured, mechanism, tmp_path):
    src, dst = _streams(spark, secured, partitions=1)
    values = [f"{mechanism}-{i}".encode() for i in range(20)]
    kafka.produce(spark, secured.bootstrap_servers, src, values)

    client = secured.client_options(mechanism)
    assert client["kafka.bootstrap.servers"] != secured.bootstrap_servers  # the secured listener, not the plain one
    _copy(spark, client, src, dst, tmp_path / "cp")

    assert _user_records(spark, secured, dst, 0) == values


def test_plugins_compiled_against_kafka_interfaces_serve_the_source_and_the_sink(spark, secured, tmp_path):
    """A SASL client callback handler (the only holder of the credentials: the JAAS config names
    none) authenticates the source's and the sink's clients, and a producer partitioner places the
    sink's records without a key."""
    src, dst = _streams(spark, secured, partitions=4)
    values = [f"r{i}".encode() for i in range(40)]
    kafka.produce(spark, secured.bootstrap_servers, src, values)
    credentials = tmp_path / "credentials"
    credentials.write_text(f"{USER}:{PASSWORD}")
    client = {
        **secured.client_options("SCRAM-SHA-256", with_credentials=False),
        "kafka.sasl.client.callback.handler.class": HANDLER,
        "kafka.streamctl.test.credentials.file": str(credentials),
    }

    _copy(spark, client, src, dst, tmp_path / "cp", **{"kafka.partitioner.class": PARTITIONER})

    # LastBytePartitioner: partition = last byte of the value mod 4 ('0' is byte 48).
    for p in range(4):
        got = _user_records(spark, secured, dst, p)
        assert sorted(got) == sorted(v for v in values if v[-1] % 4 == p), f"partition {p}"


# -- the permissions of a transactional sink, under Kafka's authorizer ----------------------------


@pytest.fixture(scope="module")
def authorized() -> Iterator[SecuredKafkaBroker]:
    """A secured broker where USER may do only what a test grants it."""
    with SecuredKafkaBroker(authorizer=True, properties={"log.retention.ms": "-1"}) as broker:
        yield broker


def _transactional_sink_permissions(prefix: str, topic: str, *, read_topic: bool = True) -> list[Acl]:
    """What docs/exactly-once.md ("Permissions") says a transactional sink needs, nothing more
    (DESCRIBE is implied by WRITE and READ; DescribeConfigs on the cluster is optional)."""
    return [
        Acl("TRANSACTIONAL_ID", prefix, "WRITE", prefixed=True),
        Acl("GROUP", prefix, "READ", prefixed=True),
        Acl("TOPIC", topic, "WRITE"),
        *([Acl("TOPIC", topic, "READ")] if read_topic else []),
    ]


def test_a_transactional_write_needs_the_documented_permissions_and_read_on_its_topic(spark, authorized):
    """A transactional batch write by a principal with exactly the documented permissions commits
    every row. Without READ on the topic it wrote, Kafka refuses each transaction's marker (the
    batch as the offset of a group on the topic's partition 0: TxnOffsetCommit checks READ on the
    topics it names), and the write fails with nothing visible to read_committed readers."""
    n = next(_names)
    allowed, refused = f"acl-allowed-{n}", f"acl-refused-{n}"
    for name in (allowed, refused):
        kafka.create_stream(spark, authorized.bootstrap_servers, name, 2)
    authorized.grant(
        *_transactional_sink_permissions("streamctl", allowed),  # the default transactionalIdPrefix
        *_transactional_sink_permissions("acl-refused", refused, read_topic=False),
    )
    client = authorized.client_options("SCRAM-SHA-512")
    # Two writer partitions: two transactions, each with its marker.
    rows = spark.range(40).selectExpr("CAST(id AS STRING) AS value").repartition(2)

    def write(topic: str, **sink: str) -> None:
        sink_options = options.sink(client["kafka.bootstrap.servers"], topic, transactional=True, **sink)
        rows.write.format("streamctl").options(**sink_options).options(**client).save()

    write(allowed)
    # The commit returns once the coordinator logged it; the markers reach the partitions after.
    everything = sorted(map(str, range(40)))
    wait_for(
        "every row visible to read_committed",
        lambda: read_committed_values(spark, authorized.bootstrap_servers, allowed, 2) == everything,
        timeout=60,
    )

    # Whichever the writer meets first (a record failed after the marker was refused, or a send the
    # producer refuses itself from then on), the error is the marker's, naming what to grant.
    with pytest.raises(StreamctlException) as failed:
        write(refused, transactional_id_prefix="acl-refused")
    message = str(failed.value)
    assert "TxnOffsetCommitResponse: Topic authorization failed" in message, message
    assert f"must allow this principal READ on stream '{refused}'" in message, message
    assert read_committed_values(spark, authorized.bootstrap_servers, refused, 2) == []


# -- the operator CLI against a secured broker ----------------------------------------------------

WRONG_PASSWORD = "not-the-password-7q2x"


def _cli(*args: str) -> subprocess.Popen[str]:
    """The installed ``streamctl`` console script, started (not waited for)."""
    command = Path(sys.executable).with_name("streamctl")
    return subprocess.Popen([str(command), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _command_config(path: Path, client: dict[str, str], **override: str | None) -> Path:
    """``client``'s ``kafka.*`` options as a Kafka tools' properties file (prefix removed);
    ``override``: other values (None leaves one out)."""
    props = {k.removeprefix("kafka."): v for k, v in client.items() if k != "kafka.bootstrap.servers"}
    props.update(override)
    props = {k: v for k, v in props.items() if v is not None}
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def _wrong_jaas(broker: SecuredKafkaBroker, mechanism: str) -> str:
    bare = broker.client_options(mechanism, with_credentials=False)["kafka.sasl.jaas.config"]
    return bare.replace(" required;", f' required username="{USER}" password="{WRONG_PASSWORD}";')


def _children_cmdlines(parent: int) -> dict[int, bytes]:
    """The command lines of ``parent``'s child processes running now, read from /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue  # ended while we looked
    return found


@pytest.fixture(scope="module")
def secured_checkpoint(spark, secured, tmp_path_factory) -> tuple[str, Path]:
    """A query's checkpoint, written through the SASL listener: (its input stream, the checkpoint)."""
    src, dst = _streams(spark, secured, partitions=2)
    kafka.produce(spark, secured.bootstrap_servers, src, [b"a", b"b", b"c", b"d"], partitions=[0, 1, 0, 1])
    checkpoint = tmp_path_factory.mktemp("secured") / "cp"
    _copy(spark, secured.client_options("PLAIN"), src, dst, checkpoint)
    return src, checkpoint


def test_no_child_of_the_cli_sees_a_secret_on_its_command_line(secured, secured_checkpoint, tmp_path):
    """Kafka settings reach the operator JVM over stdin, never its arguments, whether the user
    gave them in a --command-config file or (warned) with --kafka-option."""
    src, checkpoint = secured_checkpoint
    client = secured.client_options("PLAIN")
    # A file that serves Kafka's own tools too: their consumers' settings are not the commands' concern.
    tools = {
        "key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
        "auto.offset.reset": "earliest",
    }
    config = _command_config(tmp_path / "client.properties", client, **tools)
    jaas = client["kafka.sasl.jaas.config"]
    runs = {
        "describe --command-config": ["describe", "--checkpoint", str(checkpoint), "--output", "json",
                                      "--bootstrap-servers", secured.sasl_servers, "--command-config", str(config)],
        "reset --kafka-option": ["startpoints", "reset", "--checkpoint", str(checkpoint), "--topic", src,
                                 "--to-earliest", "--bootstrap-servers", secured.sasl_servers,
                                 "--command-config", str(_command_config(tmp_path / "no-jaas.properties", client,
                                                                         **{"sasl.jaas.config": None})),
                                 "--kafka-option", f"sasl.jaas.config={jaas}"],
    }  # fmt: skip
    for name, args in runs.items():
        cli = _cli(*args)
        seen: dict[int, bytes] = {}
        while cli.poll() is None:
            # Only the children that are the JVM already: a child between fork and exec still
            # shows the CLI's own command line, which is the user's to keep clean.
            seen.update({p: c for p, c in _children_cmdlines(cli.pid).items() if b"streamctl.ops.OpsMain" in c})
        out, err = cli.communicate()
        assert cli.returncode == 0, f"{name}: {err}"
        assert seen, f"{name}: the operator JVM was never seen running"
        for cmdline in seen.values():
            assert PASSWORD.encode() not in cmdline and b"jaas" not in cmdline.lower(), f"{name}: {cmdline!r}"
        if name.startswith("describe"):
            assert json.loads(out)["broker"] == "reachable"  # the settings arrived: it authenticated
        else:
            assert "Dry run" in out, out  # it reached the broker: the settings arrived
            assert "puts a secret on the command line" in err and PASSWORD not in err, err


def test_describe_with_a_wrong_password_says_so_in_one_line(secured, secured_checkpoint, tmp_path):
    _, checkpoint = secured_checkpoint
    for mechanism in ("PLAIN", "SCRAM-SHA-256"):
        config = _command_config(
            tmp_path / f"{mechanism}.properties",
            secured.client_options(mechanism),
            **{"sasl.jaas.config": _wrong_jaas(secured, mechanism)},
        )
        where = [
            "--checkpoint",
            str(checkpoint),
            "--bootstrap-servers",
            secured.sasl_servers,
            "--command-config",
            str(config),
        ]
        cli = _cli("describe", *where, "--output", "json")
        out, err = cli.communicate(timeout=120)
        assert cli.returncode == 0, err
        broker = json.loads(out)["broker"]  # the answer is JSON alone, whatever Kafka logged
        assert broker.startswith(f"Kafka at {secured.sasl_servers} refused authentication"), broker
        assert f"SASL mechanism {mechanism}" in broker and "\n" not in broker, broker
        assert WRONG_PASSWORD not in broker + out + err
        cli = _cli("describe", *where)
        table, err = cli.communicate(timeout=120)
        assert cli.returncode == 0 and f"SASL mechanism {mechanism}" in table, table + err


def test_no_secret_in_logs_errors_progress_plans_checkpoints_or_cli_output(spark, secured, tmp_path, capsys):
    """After a successful and a failed secured run, the password (right or wrong) is nowhere a
    user or operator looks: logs at INFO, the error, progress JSON, explain(), the checkpoint
    and its metadata store, and what the streamctl command prints and draws."""
    src, dst = _streams(spark, secured, partitions=1)
    kafka.produce(spark, secured.bootstrap_servers, src, [b"x", b"y"])
    client = secured.client_options("SCRAM-SHA-512")
    wrong = {**client, "kafka.sasl.jaas.config": _wrong_jaas(secured, "SCRAM-SHA-512")}
    secrets = (PASSWORD, WRONG_PASSWORD)
    seen: dict[str, str] = {}

    def run(name: str, options_: dict[str, str]) -> None:
        q = _start_copy(spark, options_, src, dst, tmp_path / name)
        with contextlib.suppress(StreamingQueryException):  # the failed run: its error is read below
            q.awaitTermination(180)
        seen[f"{name} error"] = str(q.exception() or "")
        seen[f"{name} progress"] = json.dumps(list(q.recentProgress), default=str)
        q.explain(True)
        seen[f"{name} explain"] = capsys.readouterr().out

    spark.sparkContext.setLogLevel("INFO")
    try:
        with driver_log(spark, "INFO") as log:
            run("ok", client)
            run("failed", wrong)
            seen["log"] = log()
    finally:
        spark.sparkContext.setLogLevel("WARN")
    assert seen["ok error"] == "" and "refused authentication" in seen["failed error"], seen["failed error"]
    assert "batchId" in seen["ok progress"] and "streamctl" in seen["ok explain"]
    assert "INFO " in seen["log"], "INFO lines were captured"
    for name in ("ok", "failed"):
        for f in (tmp_path / name).rglob("*"):
            if f.is_file():
                seen[str(f)] = f.read_bytes().decode("utf-8", "replace")
    store = tmp_path / "ok" / "streamctl"  # the metadata store, beside the checkpoint
    assert any(k.startswith(f"{store}/") for k in seen) and f"{tmp_path / 'ok' / 'offsets' / '0'}" in seen

    config = _command_config(tmp_path / "client.properties", client)
    report = tmp_path / "report.html"
    where = ["--checkpoint", str(tmp_path / "ok")]
    broker = ["--bootstrap-servers", secured.sasl_servers, "--command-config", str(config)]
    for args in (["describe", *where, *broker], ["startpoints", "list", *where], ["report", *where, "-o", str(report)]):
        cli = _cli(*args)
        out, err = cli.communicate(timeout=120)
        assert cli.returncode == 0, err
        seen[" ".join(args[:2])] = out + err
    seen["report.html"] = report.read_text()

    leaks = [place for place, text in seen.items() for secret in secrets if secret in text]
    assert leaks == [], leaks
