"""Where the read path spends its CPU: async-profiler (Maven Central, tools.profiler:async-profiler)
in the Spark JVM, over the tuned payload query of bench/read_throughput.py, streamctl and the
built-in in one JVM, each after two warm-up runs; prints, per source, the share of samples in Kafka's
consumer, the connector's own per-record code, Spark's aggregation, the JIT compiler and GC, and
leaves the collapsed stacks (flame-graph input) in --out.

    .venv/bin/python bench/profile_read.py --records 1500000   # Linux x64 only

Not part of ./build.sh bench: a profile guides work, its figures are no benchmark result.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import DataFrame

from bench.common import BUILTIN_POOLED_GROUP, TUNED_CONSUMER, kafka_options, run_available_now
from bench.profiling import Stacks, arguments, profile, profiled_session
from bench.read_throughput import _payload
from streamctl import options
from streamctl_testing import kafka


def summary(collapsed: Path) -> list[str]:
    s = Stacks(collapsed)
    has, share = s.has, s.share

    def reader(f: list[str]) -> bool:
        return has(f, "TaskPartitionReader.next", "KafkaBatchPartitionReader.next")

    return [
        s.overview(),
        f"  of the task threads' samples: the connector's reader {share(reader)}, of which",
        f"    Kafka's consumer (poll, fetch, parsing) {share(lambda f: reader(f) and has(f, 'KafkaConsumer.'))}: "
        f"record parsing {share(lambda f: has(f, 'CompletedFetch.fetchRecords'))}, socket reads "
        f"{share(lambda f: has(f, 'NetworkReceive.readFrom'))}, offset look-ups "
        f"{share(lambda f: has(f, 'OffsetFetcher', 'endOffsets', 'beginningOffsets'))}",
        f"    the connector's own per-record code {share(lambda f: reader(f) and not has(f, 'KafkaConsumer.'))}: "
        f"row writing {share(lambda f: has(f, 'EnvelopeRowConverter.toRow', 'KafkaRecordToRowConverter'))}",
        f"  Spark's generated aggregation outside the reader "
        f"{share(lambda f: not reader(f) and has(f, 'GeneratedIteratorForCodegenStage'))}",
    ]


def main() -> None:
    args = arguments(__doc__, 1_500_000, "source", "profile-read").parse_args()
    with profiled_session(args.out) as (broker, spark, profiler):
        servers = broker.bootstrap_servers
        topic = "profile-read"
        kafka.create_stream(spark, servers, topic, 8)
        kafka.produce_synthetic(spark, servers, topic, args.records, 100)

        def streamctl() -> DataFrame:
            opts = options.source(servers, [topic], starting_offsets="earliest", kafka=TUNED_CONSUMER)
            return spark.readStream.format("streamctl").options(**opts).load()

        def builtin() -> DataFrame:
            return (
                spark.readStream.format("kafka")
                .option("kafka.bootstrap.servers", servers)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .options(**kafka_options(TUNED_CONSUMER))
                .option("kafka.group.id", BUILTIN_POOLED_GROUP)
                .load()
            )

        runs = [0]

        def run(frame: Callable[[], DataFrame]) -> float:
            runs[0] += 1
            started = time.perf_counter()
            run_available_now(frame(), str(args.out / f"checkpoint-{runs[0]}"), lambda b, _i: _payload(b))
            return time.perf_counter() - started

        sources = {"streamctl": streamctl, "built-in": builtin}
        for frame in sources.values():
            for _ in range(2):
                run(frame)
        for name, frame in sources.items():
            out = args.out / f"{name}.collapsed"
            seconds = profile(profiler, out, args.runs, lambda frame=frame: run(frame))
            print(
                f"{name}, tuned payload query, {args.records:,} records: runs "
                f"{', '.join(f'{s:.2f}' for s in seconds)} s; stacks in {out}"
            )
            print("\n".join(summary(out)), flush=True)


if __name__ == "__main__":
    main()
