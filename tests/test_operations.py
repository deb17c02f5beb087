"""The ``streamctl`` command on a real broker and a real query: describe, kafka-consumer-groups
style startpoint resets, the report page (rendered in headless Chromium), and the command line
itself (help, version, usage errors)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import streamctl
from streamctl import _ops, description, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import driver_log, run_available_now, wait_for

ENV = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``streamctl`` console script, as an operator runs it."""
    command = Path(sys.executable).with_name("streamctl")
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=120, env=ENV, check=False)


def _source(spark, servers, stream, **more):
    return spark.readStream.format("streamctl").options(**options.source(servers, [stream], **more)).load()


def test_command_line_parses_without_a_jvm(tmp_path):
    top = cli("--help")
    assert top.returncode == 0 and "describe" in top.stdout and "example:" in top.stdout
    for command in (["describe"], ["startpoints"], ["startpoints", "reset"], ["startpoints", "list"], ["report"]):
        done = cli(*command, "--help")
        assert done.returncode == 0, done.stderr
        assert "example:\n  streamctl " + command[0] in done.stdout, command
    assert cli("--version").stdout.strip() == f"streamctl {streamctl.__version__}"
    typo = cli("descrbe", "--checkpoint", "x")
    assert typo.returncode == 2 and "invalid choice: 'descrbe'" in typo.stderr
    missing = cli("startpoints", "reset", "--checkpoint", str(tmp_path), "--topic", "t")
    assert missing.returncode == 2 and "one of the arguments --to-earliest" in missing.stderr
    both = cli("startpoints", "reset", "--checkpoint", "x", "--topic", "t", "--to-current", "--execute", "--dry-run")
    assert both.returncode == 2 and "not allowed with argument --execute" in both.stderr
    # python -m streamctl is the same command.
    module = subprocess.run([sys.executable, "-m", "streamctl", "--version"], capture_output=True, text=True, env=ENV)
    assert module.stdout.strip() == f"streamctl {streamctl.__version__}"


def test_the_commands_take_sparks_jars_from_spark_home_as_the_jar_choice_does(tmp_path, monkeypatch):
    """A cluster's pyspark (in $SPARK_HOME/python) has no jars/ folder of its own: the commands' JVM
    takes Spark's jars from where the Spark line and Scala version were told, $SPARK_HOME/jars."""
    from streamctl import _jars

    monkeypatch.delenv("SPARK_HOME", raising=False)
    wheel_jars = _jars.spark_jars_dir()
    assert wheel_jars is not None
    (tmp_path / "jars").mkdir()
    for jar in wheel_jars.glob("*.jar"):
        (tmp_path / "jars" / jar.name).symlink_to(jar)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    taken = [Path(p) for p in _ops.classpath().split(os.pathsep)]
    spark_jars = [p for p in taken if p.parent in (tmp_path / "jars", wheel_jars)]
    assert any(p.name.startswith("scala-library-") for p in spark_jars), taken
    assert {p.parent for p in spark_jars} == {tmp_path / "jars"}, taken


def test_the_commands_take_the_clusters_hadoop_settings_and_object_store_jars(tmp_path, monkeypatch):
    """What a Spark driver started on this machine would read its checkpoint with: the site files of
    $HADOOP_CONF_DIR and Spark's conf dir, spark-defaults.conf's spark.hadoop.*, and the object
    stores' file systems among Spark's jars."""
    from streamctl import _jars

    monkeypatch.delenv("SPARK_HOME", raising=False)
    wheel_jars = _jars.spark_jars_dir()
    assert wheel_jars is not None
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    for jar in wheel_jars.glob("*.jar"):
        (home / "jars" / jar.name).symlink_to(jar)
    for cloud in ("hadoop-aws-3.4.1.jar", "bundle-2.24.6.jar", "hadoop-azure-3.4.1.jar", "gcs-connector-3.0.4.jar"):
        (home / "jars" / cloud).write_bytes(b"")
    (home / "conf").mkdir()
    (home / "conf" / "spark-defaults.conf").write_text(
        "spark.hadoop.fs.s3a.endpoint   http://minio:9000\n"
        "spark.hadoop.fs.s3a.path.style.access=true\n"
        "spark.jars x.jar\n"
    )
    (home / "conf" / "hdfs-site.xml").write_text("<configuration/>")
    hadoop = tmp_path / "hadoop"
    hadoop.mkdir()
    (hadoop / "core-site.xml").write_text("<configuration/>")
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.setenv("HADOOP_CONF_DIR", str(hadoop))
    names = {Path(p).name for p in _ops.classpath().split(os.pathsep)}
    assert {"hadoop-aws-3.4.1.jar", "bundle-2.24.6.jar", "hadoop-azure-3.4.1.jar", "gcs-connector-3.0.4.jar"} <= names
    assert _ops.hadoop_settings() == {
        "hadoopConfFiles": [str(hadoop / "core-site.xml"), str(home / "conf" / "hdfs-site.xml")],
        "hadoopConf": {"fs.s3a.endpoint": "http://minio:9000", "fs.s3a.path.style.access": "true"},
    }


def test_describe_reads_a_checkpoint_through_the_clusters_default_file_system(spark, servers, make_stream, tmp_path):
    """fs.defaultFS from $HADOOP_CONF_DIR's core-site.xml (here a viewfs mount over a local directory,
    as an HDFS cluster's gateway has one): a path without a scheme is on it, for the command as for
    the query; and in a session, its own Hadoop configuration answers."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"r%d" % i for i in range(3)])
    real = tmp_path / "real"
    df = _source(spark, servers, stream, starting_offsets="earliest")
    assert len(run_available_now(df, str(real / "q1"))) == 3
    hadoop = tmp_path / "hadoop"
    hadoop.mkdir()
    mount = f"fs.viewfs.mounttable.c{os.getpid()}.link./chk"
    (hadoop / "core-site.xml").write_text(
        f"<configuration><property><name>fs.defaultFS</name><value>viewfs://c{os.getpid()}/</value></property>"
        f"<property><name>{mount}</name><value>{real.as_uri()}</value></property></configuration>"
    )
    done = subprocess.run(
        [str(Path(sys.executable).with_name("streamctl")), "describe", "--checkpoint", "/chk/q1", "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**ENV, "HADOOP_CONF_DIR": str(hadoop)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [p["committed"] for p in json.loads(done.stdout)["partitions"]] == [3]

    conf = spark.sparkContext._jsc.hadoopConfiguration()  # noqa: SLF001  (the session's, as a user sets it)
    conf.set(mount, real.as_uri())
    try:
        described = streamctl.describe(f"viewfs://c{os.getpid()}/chk/q1")
        assert [p.committed for p in described.partitions] == [3]
    finally:
        conf.unset(mount)


def test_keeping_a_class_archive_removes_those_whose_jars_are_gone_or_changed(tmp_path):
    """The operator commands' and the tests' class-data archives (25 to 170 MB each) are made per
    classpath; once one of its jars is gone or changed the JVM refuses the archive, so keeping a
    new one removes those, and the archives older streamctl releases left without a record."""
    jars = tmp_path / "venv"
    jars.mkdir()
    kept, changed, gone = (jars / f"{n}.jar" for n in ("kept", "changed", "gone"))
    for jar in (kept, changed, gone):
        jar.write_bytes(b"classes")
    cache = tmp_path / "cache"
    cache.mkdir()

    def made(name: str, *made_from: Path) -> Path:
        pending = cache / f"{name}.jsa.1.tmp"
        pending.write_bytes(b"archive")
        _ops.keep_class_archive(pending, cache / f"{name}.jsa", [str(p) for p in made_from])
        return cache / f"{name}.jsa"

    live, of_changed, of_gone = made("live", kept), made("of-changed", kept, changed), made("of-gone", gone)
    (cache / "of-gone.jsa.lock").touch()
    legacy = cache / "legacy.jsa"
    legacy.write_bytes(b"archive")
    assert sorted(p.name for p in cache.glob("*.jsa")) == ["legacy.jsa", "live.jsa", "of-changed.jsa", "of-gone.jsa"]

    changed.write_bytes(b"other classes")
    gone.unlink()
    newest = made("newest", kept, changed)
    assert sorted(p.name for p in cache.iterdir()) == ["live.jsa", "live.jsa.from", "newest.jsa", "newest.jsa.from"]
    assert not legacy.exists() and not of_changed.exists() and not of_gone.exists()
    assert live.read_bytes() == newest.read_bytes() == b"archive"
    assert _ops.prune_class_archives(cache) == []


def test_describe_reset_and_report_a_real_query(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    kafka.produce(spark, servers, stream, [b"r%d" % i for i in range(10)], partitions=[i % 2 for i in range(10)])
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, stream, starting_offsets="earliest", max_records_per_batch=4)
    assert len(run_available_now(df, cp)) == 10

    # A path without a query is an error saying so, not an empty table.
    wrong = cli("describe", "--checkpoint", str(tmp_path / "nothing-here"))
    assert wrong.returncode == 1 and "No streamctl query at" in wrong.stderr, wrong.stderr

    kafka.produce(spark, servers, stream, [b"late-1", b"late-2", b"late-3"], partitions=[0, 0, 0])
    done = cli("describe", "--checkpoint", cp, "--bootstrap-servers", servers, "--output", "json")
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    rows = {(p["stream"], p["partition"]): p for p in described["partitions"]}
    assert {k: (p["committed"], p["logEnd"], p["lag"]) for k, p in rows.items()} == {
        (stream, 0): (5, 8, 3),
        (stream, 1): (5, 5, 0),
    }
    assert described["broker"] == "reachable" and described["committedBatch"] >= 2
    assert {p["task"] for p in described["partitions"]} == {"Partition 0", "Partition 1"}
    table = cli("describe", "--checkpoint", cp, "--bootstrap-servers", servers)
    assert table.stdout.splitlines()[4].split()[:8] == [
        "SOURCE",
        "TOPIC",
        "PARTITION",
        "TASK",
        "EXECUTOR",
        "COMMITTED",
        "LOG-END",
        "LAG",
    ]
    # The same from Python, no SparkSession involved.
    d = streamctl.describe(cp, bootstrap_servers=servers)
    assert [(p.partition, p.committed, p.log_end, p.lag) for p in d.partitions] == [(0, 5, 8, 3), (1, 5, 5, 0)]
    with pytest.raises(streamctl.StreamctlException, match="No streamctl query at"):
        streamctl.describe(str(tmp_path))

    # kafka-consumer-groups style: the plan is printed, nothing written without --execute.
    where = ["--checkpoint", cp, "--bootstrap-servers", servers]
    plan = cli("startpoints", "reset", *where, "--topic", f"{stream}:0", "--shift-by", "-2")
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines()[1].split()[:6] == [stream, "0", "(every", "task)", "5", "3"]
    assert "Dry run: nothing written" in plan.stdout
    assert cli("startpoints", "list", "--checkpoint", cp).stdout.startswith("No startpoints")
    export = tmp_path / "plan.csv"
    plan = cli("startpoints", "reset", *where, "--all-topics", "--to-earliest", "--export", str(export))
    assert plan.returncode == 0, plan.stderr
    assert list(csv.reader(export.open())) == [["topic", "partition", "offset"], [stream, "0", "0"], [stream, "1", "0"]]
    # An export that cannot be made stops an --execute before it writes anything.
    for refused, why in (
        (["--checkpoint", cp, "--export", str(export)], "give --bootstrap-servers"),
        ([*where, "--export", str(tmp_path / "no-such-dir" / "plan.csv")], "there is no directory"),
        ([*where, "--export", str(tmp_path)], "is a directory"),
    ):
        done = cli("startpoints", "reset", *refused, "--all-topics", "--to-earliest", "--execute")
        assert done.returncode == 1 and why in done.stderr, done.stderr
        assert cli("startpoints", "list", "--checkpoint", cp).stdout.startswith("No startpoints")
    current = cli("startpoints", "reset", "--checkpoint", cp, "--topic", stream, "--to-current")
    assert [line.split()[4:6] for line in current.stdout.splitlines()[1:3]] == [["5", "5"]] * 2  # checkpoint alone
    ago = cli("startpoints", "reset", *where, "--topic", stream, "--by-duration", "PT1H", "--dry-run")
    assert ago.returncode == 0 and [line.split()[5] for line in ago.stdout.splitlines()[1:3]] == ["0", "0"]

    # Executed from the exported file (partition 0 only), then a shift on partition 1.
    export.write_text(f"topic,partition,offset\n{stream},0,1\n")
    done = cli("startpoints", "reset", *where, "--from-file", str(export), "--execute")
    assert done.returncode == 0 and "Written to" in done.stdout, done.stderr
    done = cli("startpoints", "reset", *where, "--topic", f"{stream}:1", "--shift-by", "-100", "--execute")
    assert done.returncode == 0 and "clamped from -95" in done.stdout, done.stdout
    described = streamctl.describe(cp)
    assert [p.pending_startpoints for p in described.partitions] == [["offset 1"], ["offset 0"]]

    # The query applies them at its next start: partition 0 from 1, partition 1 from 0.
    assert len(run_available_now(df, cp)) == (8 - 1) + 5
    assert all(p.pending_startpoints == [] for p in streamctl.describe(cp).partitions)

    # The report: lag per partition and watermarks over the recorded batches, the startpoint marked.
    page = tmp_path / "report.html"
    done = cli("report", "--checkpoint", cp, "-o", str(page))
    assert done.returncode == 0, done.stderr
    dom = _render(page)
    assert f'data-series="{stream}-0"' in dom and f'data-series="{stream}-1"' in dom
    assert dom.count('<line class="event startpoint"') == 2  # batch 3, one per partition
    assert f"batch 3: startpoint {stream}-0 (Partition 0) offset 1 -&gt; offset 1" in dom


def test_errors_name_the_problem(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    cp = str(tmp_path / "cp")
    where = ["--checkpoint", cp, "--bootstrap-servers", servers]
    done = cli("startpoints", "reset", *where, "--topic", f"{stream}:3", "--to-earliest")
    missing = f"Partition 3 of stream '{stream}' does not exist (startpoints reset): it has 1 partition (0)"
    assert done.returncode == 1 and missing in done.stderr, done.stderr
    done = cli("startpoints", "reset", "--checkpoint", cp, "--topic", f"{stream}:0,-1", "--to-earliest")
    negative = f"Partition -1 of stream '{stream}' does not exist (startpoints reset): partitions are numbered from 0"
    assert done.returncode == 1 and negative in done.stderr, done.stderr
    done = cli("startpoints", "reset", *where, "--topic", stream, "--to-datetime", "2024-05-01T10:00:00")
    assert done.returncode == 1 and "has no timezone" in done.stderr, done.stderr
    done = cli("startpoints", "reset", *where, "--topic", stream, "--to-current")
    assert done.returncode == 1 and "--to-current needs the committed offset" in done.stderr
    done = cli("startpoints", "reset", *where, "--topic", stream, "--to-offset", "99", "--execute")
    assert done.returncode == 1 and "offset 99 is beyond the end of the partition" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    done = cli("report", "--checkpoint", cp, "-o", str(tmp_path / "r.html"))
    assert done.returncode == 1 and "No progress history" in done.stderr
    # Every partition at fault is named, not only the last line of the JVM's message.
    wide = make_stream(partitions=2)
    done = cli("startpoints", "reset", *where, "--topic", wide, "--to-offset", "99")
    assert done.returncode == 1 and "Cannot resolve 2 startpoints" in done.stderr, done.stderr
    assert f"{wide}-0: offset 99" in done.stderr and f"{wide}-1: offset 99" in done.stderr, done.stderr
    done = cli("startpoints", "reset", *where, "--topic", wide, "--to-offset", "-5")
    assert done.returncode == 1 and "give an offset of 0 or more" in done.stderr, done.stderr
    plan = tmp_path / "plan.csv"
    plan.write_text(f"topic,partition,offset\n{wide},0,0\n")
    done = cli("startpoints", "reset", *where, "--from-file", str(plan), "--topic", stream)
    assert done.returncode == 2 and "--from-file names its partitions itself" in done.stderr, done.stderr
    # Two offsets for one partition: which was meant is not known, so nothing is planned.
    plan.write_text(f"topic,partition,offset\n{wide},0,0\n{wide},1,0\n{wide},0,1\n")
    done = cli("startpoints", "reset", *where, "--from-file", str(plan))
    assert done.returncode == 2, done.stderr
    assert f"{plan} line 4: topic {wide} partition 0 is already on line 2" in done.stderr, done.stderr
    done = cli("startpoints", "reset", "--bootstrap-servers", servers, "--topic", stream, "--to-earliest")
    assert done.returncode == 2 and "which query? give --checkpoint" in done.stderr, done.stderr
    # A checkpoint no query has run with (a typo, or a query yet to start) still takes startpoints,
    # and the answer says so.
    done = cli("startpoints", "reset", *where, "--topic", stream, "--to-earliest", "--execute")
    assert done.returncode == 0 and f"No query has run with checkpoint {cp} yet" in done.stdout, done.stdout


def test_reset_of_a_query_with_its_own_store_takes_its_checkpoint_and_its_store(spark, servers, make_stream, tmp_path):
    """A query that sets metadata.store.path: the current offsets are in its checkpoint, its
    startpoints in its store, so a relative reset needs both."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"r%d" % i for i in range(6)])
    cp, store = str(tmp_path / "cp"), str(tmp_path / "store")
    df = _source(spark, servers, stream, starting_offsets="earliest", metadata_store_path=store)
    assert len(run_available_now(df, cp)) == 6
    where = ["--checkpoint", cp, "--metadata-store-path", store]
    done = cli("startpoints", "reset", *where, "--topic", stream, "--shift-by", "-2", "--execute")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[4:6] == ["6", "4"], done.stdout
    assert "Written to" in done.stdout and store in done.stdout, done.stdout
    # The query reads its own store: the last two records again.
    assert len(run_available_now(df, cp)) == 2


def test_a_new_checkpoint_on_a_shared_store_starts_its_own_progress_history(spark, servers, make_stream, tmp_path):
    """Batch ids start at 0 again: the report must not show the earlier query's later batches."""
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"r%d" % i for i in range(6)])
    store = str(tmp_path / "store")
    first = _source(
        spark, servers, stream, starting_offsets="earliest", metadata_store_path=store, max_records_per_batch=2
    )
    assert len(run_available_now(first, str(tmp_path / "cp1"))) == 6  # batches 0, 1, 2
    history = _ops.run("history", description.request(None, None, store))
    assert [b["batch"] for b in history["sources"]["0"]] == [0, 1, 2]

    second = _source(spark, servers, stream, starting_offsets="latest", metadata_store_path=store)
    cp2 = str(tmp_path / "cp2")
    q = second.writeStream.format("noop").option("checkpointLocation", cp2).trigger(processingTime="100 milliseconds")
    running = q.start()

    def only_the_new_querys() -> bool:
        try:
            history = _ops.run("history", description.request(None, None, store))
        except streamctl.StreamctlException as e:  # none yet: the old one is gone, the new one to come
            assert "No progress history" in str(e)
            return False
        batches = [b["batch"] for b in history["sources"]["0"]]
        return batches[:1] == [0] and max(batches) < 2  # it has nothing to read after batch 0

    try:
        wait_for("the new query's first batch in the history, alone", only_the_new_querys, running, timeout=90)
    finally:
        running.stop()


def test_one_info_line_per_batch_and_no_other_streamctl_info(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    kafka.produce(spark, servers, stream, [b"x"] * 6, partitions=[0, 1, 0, 1, 0, 1])
    j = jvm(spark)
    configurator = j.org.apache.logging.log4j.core.config.Configurator
    # Every streamctl logger at INFO, not only the batch line's: a plain run must still log only
    # those lines there (the root stays at WARN, so Kafka's clients could not show up here).
    configurator.setLevel("streamctl", j.org.apache.logging.log4j.Level.INFO)
    try:
        with driver_log(spark, "INFO") as log:
            df = _source(spark, servers, stream, starting_offsets="earliest", max_records_per_batch=4)
            run_available_now(df, str(tmp_path / "cp"))
            # The listener logs a batch when its progress event arrives, which can be after the
            # query has ended.
            wait_for("two batches' INFO lines", lambda: _batch_lines(log()) >= 2)
            text = log()
    finally:
        configurator.setLevel("streamctl", j.org.apache.logging.log4j.Level.WARN)
    lines = [line for line in text.splitlines() if line.startswith("INFO batch ")]
    assert len(lines) == 2, text[-3000:]
    assert lines[0].endswith(f"streamctl[{stream}] batch 0: admitted {stream}=4; lag max 1"), lines
    assert lines[1].endswith(f"streamctl[{stream}] batch 1: admitted {stream}=2; lag max 0"), lines
    # Nothing else of streamctl's at INFO in a run where nothing went wrong.
    chatter = [line for line in text.splitlines() if line.startswith("INFO ") and not line.startswith("INFO batch ")]
    assert chatter == [], chatter[:5]


def _batch_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("INFO batch "))


def _render(page: Path) -> str:
    """The DOM of ``page`` after headless Chromium rendered it (build.sh installs Chromium)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is missing: ./build.sh test installs it (apt-get install chromium)"
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
