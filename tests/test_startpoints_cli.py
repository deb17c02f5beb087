"""``python -m streamctl startpoints``: tables a person can read, errors that say what is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from streamctl import StartpointManager, startpoints_cli
from streamctl_testing import kafka


def _cli(spark, capsys, *args: str) -> tuple[int, str, str]:
    code = startpoints_cli.main(list(args))  # reuses the test session's JVM
    out = capsys.readouterr()
    return code, out.out, out.err


def test_set_dry_run_list_and_delete(spark, servers, make_stream, tmp_path, capsys):
    stream = make_stream(partitions=2)
    now_ms = int(time.time() * 1000)
    kafka.produce(spark, servers, stream, [b"a", b"b", b"c"], partitions=[0, 0, 1], timestamps=[now_ms - 7_200_000] * 3)
    cp = str(tmp_path / "cp")
    where = ["--checkpoint", cp]

    code, out, _ = _cli(
        spark,
        capsys,
        "set",
        *where,
        "--stream",
        stream,
        "--to-datetime",
        "2999-01-01T00:00:00Z",
        "--bootstrap-servers",
        servers,
        "--dry-run",
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["STREAM", "PARTITION", "TASK", "STARTPOINT", "OFFSET", "NOTE"]
    assert lines[1].split()[:7] == [stream, "0", "(every", "task)", "timestamp", "2999-01-01T00:00:00Z", "2"]
    assert "end of the partition: no message at or after that time" in lines[1]
    assert lines[2].split()[:7] == [stream, "1", "(every", "task)", "timestamp", "2999-01-01T00:00:00Z", "1"]
    assert "Dry run: nothing written" in out
    assert StartpointManager(spark, checkpoint=cp).list() == []

    code, out, _ = _cli(
        spark, capsys, "set", *where, "--stream", stream, "--to-earliest", "--bootstrap-servers", servers
    )
    assert code == 0 and "applies it when it next starts" in out
    code, out, _ = _cli(
        spark,
        capsys,
        "set",
        *where,
        "--stream",
        stream,
        "--partition",
        "1",
        "--task",
        "Partition 1",
        "--to-offset",
        "1",
    )
    assert code == 0
    code, out, _ = _cli(spark, capsys, "list", *where)
    assert [line.split()[:3] for line in out.splitlines()[1:]] == [
        [stream, "0", "(every"],
        [stream, "1", "(every"],
        [stream, "1", "Partition"],
    ]
    code, out, _ = _cli(spark, capsys, "delete", *where, "--stream", stream, "--partition", "1")
    assert code == 0 and out.startswith("Deleted 2 startpoint(s)")
    assert [e.key for e in StartpointManager(spark, checkpoint=cp).list()] == [f"kafka/{stream}/0"]


def test_errors_are_one_line_naming_the_problem(spark, servers, make_stream, tmp_path, capsys):
    stream = make_stream()
    where = ["--checkpoint", str(tmp_path / "cp")]
    code, _, err = _cli(
        spark, capsys, "set", *where, "--stream", stream, "--partition", "0", "--to-datetime", "2024-05-01T10:00:00"
    )
    assert code == 1 and "has no timezone" in err and "Traceback" not in err
    code, _, err = _cli(
        spark,
        capsys,
        "set",
        *where,
        "--stream",
        stream,
        "--partition",
        "3",
        "--to-earliest",
        "--bootstrap-servers",
        servers,
    )
    assert code == 1 and f"Partition 3 of stream '{stream}' does not exist" in err
    code, _, err = _cli(spark, capsys, "set", *where, "--stream", stream, "--to-latest", "--dry-run")
    assert code == 1 and "give --bootstrap-servers" in err
    bad_offset = ["--stream", stream, "--partition", "0", "--to-offset", "99", "--bootstrap-servers", servers]
    code, _, err = _cli(spark, capsys, "set", *where, *bad_offset)
    assert code == 1 and "offset 99 is beyond the end of the partition; valid offsets are 0 to 0" in err
    assert len(err.strip().splitlines()) == 1, err


def test_runs_as_a_command_without_a_spark_session(spark, make_stream, tmp_path):
    stream = make_stream()
    cp = str(tmp_path / "cp")
    StartpointManager(spark, checkpoint=cp).set(stream, 0, startpoints_cli.Startpoint.specific(0))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "streamctl", "startpoints", "list", "--checkpoint", cp],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == [stream, "0", "(every", "task)", "offset", "0"]
    assert done.stderr == "", "the JVM's start-up chatter is hidden"
    print(f"CLI list took {took:.1f} s")  # a bare JVM, not a SparkSession
