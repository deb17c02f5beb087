"""``streamctl startpoints list|delete`` and ``set`` (the old name of ``reset``) with a task: tables
a person can read, written only with ``--execute``."""

from __future__ import annotations

from test_operations import cli

from streamctl import Startpoint, StartpointManager


def test_set_list_and_delete_with_tasks(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    cp = str(tmp_path / "cp")
    where = ["--checkpoint", cp]
    done = cli("startpoints", "set", *where, "--stream", stream, "--to-earliest", "--bootstrap-servers", servers)
    assert done.returncode == 0 and "Dry run: nothing written" in done.stdout, done.stderr
    assert StartpointManager(spark, checkpoint=cp).list() == []

    done = cli(
        "startpoints", "set", *where, "--stream", stream, "--to-earliest", "--bootstrap-servers", servers, "--execute"
    )
    assert done.returncode == 0 and "the query applies them when it next starts" in done.stdout, done.stderr
    done = cli(
        "startpoints",
        "set",
        *where,
        "--stream",
        stream,
        "--partition",
        "1",
        "--task",
        "Partition 1",
        "--to-offset",
        "0",
        "--execute",
    )
    assert done.returncode == 0, done.stderr
    assert StartpointManager(spark, checkpoint=cp).get(stream, 1, "Partition 1") == Startpoint.specific(0)

    done = cli("startpoints", "list", *where)
    assert [line.split()[:3] for line in done.stdout.splitlines()[1:]] == [
        [stream, "0", "(every"],
        [stream, "1", "(every"],
        [stream, "1", "Partition"],
    ]
    done = cli("startpoints", "delete", *where, "--stream", stream, "--partition", "1")
    assert done.returncode == 0 and done.stdout.startswith("Deleted 2 startpoint(s)")
    assert [e.key for e in StartpointManager(spark, checkpoint=cp).list()] == [f"kafka/{stream}/0"]
