"""A Kafka cluster of three nodes (each broker and controller) on 127.0.0.1, for tests of what a
streamctl query does when a partition's leader or a transaction coordinator dies: every topic,
internal ones included, has three replicas and ``min.insync.replicas=2``, so one node down leaves
every partition writable.

Example::

    with KafkaCluster() as cluster:
        kafka.create_stream(spark, cluster.bootstrap_servers, "orders", 3, replicas=3)
        cluster.node(kafka.leaders(spark, cluster.bootstrap_servers, "orders")[0]).kill()
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Self

from streamctl_testing.broker import _HOST, _PORT_TAKEN, BrokerError, KafkaBroker, _cluster_id, _free_port, _Quorum

__all__ = ["KafkaCluster"]

_REPLICATED = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}


class KafkaCluster:
    """Three :class:`KafkaBroker` nodes in one KRaft quorum. :meth:`node` gives one by its node id
    (what Kafka's admin client names as a leader or coordinator) to ``kill()`` and ``start()``
    again; two nodes keep the quorum and every partition writable meanwhile."""

    def __init__(
        self,
        *,
        lib_dir: Path | None = None,
        properties: Mapping[str, str] | None = None,
        start_timeout: float = 120.0,
        heap: str = "384m",
    ) -> None:
        self._lib_dir, self._start_timeout, self._heap = lib_dir, start_timeout, heap
        self._properties = {**_REPLICATED, **(properties or {})}
        self._nodes: dict[int, KafkaBroker] = {}

    @property
    def bootstrap_servers(self) -> str:
        """Every node's client address, comma-separated."""
        return ",".join(n.bootstrap_servers for n in self._nodes.values())

    def node(self, node_id: int) -> KafkaBroker:
        """The node with Kafka node id ``node_id`` (1, 2 or 3)."""
        return self._nodes[node_id]

    def start(self) -> Self:
        """Starts the three nodes at once (none is ready before a majority runs)."""
        first = not self._nodes
        for attempt in (1, 2):
            if not self._nodes:
                self._nodes = self._new_nodes()
            try:
                with ThreadPoolExecutor(len(self._nodes)) as pool:
                    list(pool.map(lambda n: n.start(), self._nodes.values()))
                return self
            except BrokerError as e:
                self.stop()
                # Six ports picked as free stay unbound while three nodes format: one taken by
                # someone else meanwhile fails a node, which cannot move alone (the others name its
                # controller port). A first start moves all six; a node's restart must keep them.
                if attempt == 2 or not first or _PORT_TAKEN not in str(e):
                    raise
                self._nodes = {}
            except BaseException:
                self.stop()
                raise
        return self

    def _new_nodes(self) -> dict[int, KafkaBroker]:
        ports: list[int] = []
        for _ in range(6):
            ports.append(_free_port(avoid=ports))
        controllers = ports[3:]
        voters = ",".join(f"{i + 1}@{_HOST}:{c}" for i, c in enumerate(controllers))
        cluster_id = _cluster_id()
        return {
            i + 1: KafkaBroker(
                ports[i],
                lib_dir=self._lib_dir,
                properties=self._properties,
                start_timeout=self._start_timeout,
                heap=self._heap,
                quorum=_Quorum(i + 1, controllers[i], voters, cluster_id),
            )
            for i in range(3)
        }

    def stop(self) -> None:
        """Stops every node and deletes its data."""
        for n in self._nodes.values():
            n.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
