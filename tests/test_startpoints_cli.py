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


def test_list_and_delete_on_a_path_without_a_store_say_so(tmp_path):
    # A wrong path must not read as "no startpoints": no query ran there and no startpoint was set.
    cp = tmp_path / "no-query"
    for action in (["list"], ["delete", "--stream", "orders"]):
        done = cli("startpoints", *action, "--checkpoint", str(cp))
        assert done.returncode == 1, done.stdout
        assert f"No streamctl query at {cp}: it holds no metadata store ({cp}/streamctl does not exist" in done.stderr
    store = ["--metadata-store-path", str(tmp_path / "store")]
    done = cli("startpoints", "list", *store)
    assert done.returncode == 1 and f"No streamctl metadata store at {tmp_path / 'store'}:" in done.stderr, done.stderr

    # A startpoint set before the query's first run makes the store: it lists, and empty it lists as empty.
    done = cli("startpoints", "set", *store, "--stream", "orders", "--partition", "0", "--to-offset", "3", "--execute")
    assert done.returncode == 0, done.stderr
    done = cli("startpoints", "list", *store)
    assert done.returncode == 0 and [line.split()[:2] for line in done.stdout.splitlines()[1:]] == [["orders", "0"]]
    done = cli("startpoints", "delete", *store, "--stream", "orders")
    assert done.returncode == 0 and done.stdout.startswith("Deleted 1 startpoint(s)"), done.stderr
    done = cli("startpoints", "list", *store)
    assert done.returncode == 0 and done.stdout.strip() == f"No startpoints in {tmp_path / 'store'}.", done.stderr
