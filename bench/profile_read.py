"""Where the read path spends its CPU: async-profiler (Maven Central, tools.profiler:async-profiler)
in the Spark JVM, over the tuned payload query of bench/read_throughput.py, streamctl and the
built-in in one JVM, each after two warm-up runs; prints, per source, the share of samples in Kafka's
consumer, the connector's own per-record code, Spark's aggregation, the JIT compiler and GC, and
leaves the collapsed stacks (flame-graph input) in --out.

    .venv/bin/python bench/profile_read.py --records 1500000   # Linux x64 only

Not part of ./build.sh bench: a profile guides work, its figures are no benchmark result.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import DataFrame

from bench.common import (
    BUILTIN_POOLED_GROUP,
    ROOT,
    TUNED_CONSUMER,
    bench_session,
    kafka_options,
    run_available_now,
)
from bench.read_throughput import _payload
from streamctl import options
from streamctl_testing import kafka, kafka_broker
from streamctl_testing._jvm import jvm

VERSION = "3.0"


def async_profiler(workdir: Path) -> tuple[Path, Path]:
    """The async-profiler jar (its Java API) and its Linux x64 library, fetched once with Maven."""
    jar = workdir / f"async-profiler-{VERSION}.jar"
    if not jar.is_file():
        subprocess.run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact=tools.profiler:async-profiler:{VERSION}",
                        f"-DoutputDirectory={workdir}"], check=True)
    lib = workdir / "linux-x64" / "libasyncProfiler.so"
    if not lib.is_file():
        with zipfile.ZipFile(jar) as z:
            z.extract("linux-x64/libasyncProfiler.so", workdir)
    return jar, lib


def summary(collapsed: Path) -> list[str]:
    rows = []
    for line in collapsed.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        rows.append((stack.split(";"), int(n)))
    total = sum(n for _, n in rows) or 1

    def has(frames: list[str], *parts: str) -> bool:
        return any(p in f for f in frames for p in parts)

    tasks = [(f, n) for f, n in rows if has(f, "Executor$TaskRunner.run")]
    in_tasks = sum(n for _, n in tasks) or 1

    def share(pred: Callable[[list[str]], bool]) -> str:
        return f"{100 * sum(n for f, n in tasks if pred(f)) / in_tasks:.1f}%"

    def reader(f: list[str]) -> bool:
        return has(f, "TaskPartitionReader.next", "KafkaBatchPartitionReader.next")

    jit = sum(n for f, n in rows if has(f, "CompileBroker"))
    gc = sum(n for f, n in rows if has(f, "G1", "GangWorker", "ConcurrentGCThread"))
    return [
        f"{total} samples: executor task threads {100 * in_tasks / total:.0f}%, JIT compiler threads "
        f"{100 * jit / total:.0f}%, GC {100 * gc / total:.0f}%, the rest driver and other threads",
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_500_000)
    parser.add_argument("--runs", type=int, default=3, help="profiled runs per source, after two warm-ups")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "profile-read")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    jar, lib = async_profiler(args.out)
    with kafka_broker() as broker:
        servers = broker.bootstrap_servers
        spark = bench_session(extra={"spark.driver.extraJavaOptions": f"-agentpath:{lib}",
                                     "spark.driver.extraClassPath": str(jar)})
        profiler = jvm(spark).one.profiler.AsyncProfiler.getInstance()
        topic = "profile-read"
        kafka.create_stream(spark, servers, topic, 8)
        kafka.produce_synthetic(spark, servers, topic, args.records, 100)

        def streamctl() -> DataFrame:
            opts = options.source(servers, [topic], starting_offsets="earliest", kafka=TUNED_CONSUMER)
            return spark.readStream.format("streamctl").options(**opts).load()

        def builtin() -> DataFrame:
            return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers)
                    .option("subscribe", topic).option("startingOffsets", "earliest")
                    .options(**kafka_options(TUNED_CONSUMER)).option("kafka.group.id", BUILTIN_POOLED_GROUP).load())

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
            profiler.execute("start,event=itimer,interval=2ms")
            seconds = [run(frame) for _ in range(args.runs)]
            out = args.out / f"{name}.collapsed"
            profiler.execute(f"stop,file={out},collapsed")
            print(f"{name}, tuned payload query, {args.records:,} records: runs "
                  f"{', '.join(f'{s:.2f}' for s in seconds)} s; stacks in {out}")
            print("\n".join(summary(out)), flush=True)
        spark.stop()


if __name__ == "__main__":
    main()
