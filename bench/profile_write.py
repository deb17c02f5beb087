"""Where the write path spends its time: async-profiler (bench/profiling.py) in the Spark JVM over
bench/write_throughput.py's tuned batch write, streamctl's sink (intermediate) and the built-in in one
JVM, each after two warm-up runs. Per sink it prints each run's seconds and the CPU seconds the Spark
JVM and the broker used, then the share of CPU samples in the sink's own per-row code, Kafka's
producer (send, the producer's network thread), the flush at commit, Spark reading the cached
input, the JIT and GC; with --wall also where the Spark task threads spend their wall time (working
or waiting in the flush). Leaves the collapsed stacks (flame-graph input) in --out.

    .venv/bin/python bench/profile_write.py --records 3000000 --wall   # Linux x64 only
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import TUNED_PRODUCER, process_ids, timed_cpu
from bench.profiling import Stacks, arguments, profile, profiled_session
from bench.write_throughput import rows, write_builtin, write_once, write_streamctl

WRITERS = ("SinkDataWriter.write", "KafkaRowWriter.sendRow")


def summary(collapsed: Path) -> list[str]:
    s = Stacks(collapsed)
    has, share = s.has, s.share

    def writer(f: list[str]) -> bool:
        return has(f, *WRITERS)

    def input_rows(f: list[str]) -> bool:
        return not writer(f) and not has(f, "KafkaProducer.") and has(f, "GeneratedIterator", "InMemory", "Columnar")

    sender = s.count(lambda f: has(f, "Sender.run"), s.rows)
    return [
        s.overview() + f"; the producer's network thread {100 * sender / s.total:.0f}%",
        f"  of the task threads' samples: the sink's writer, per row {share(writer)}, of which",
        f"    KafkaProducer.send {share(lambda f: writer(f) and has(f, 'KafkaProducer.doSend'))} (appending to "
        f"its batches {share(lambda f: writer(f) and has(f, 'RecordAccumulator.append'))}), the connector's own "
        f"per-row code {share(lambda f: writer(f) and not has(f, 'KafkaProducer.doSend'))}",
        f"  the flush at commit {share(lambda f: has(f, 'KafkaProducer.flush'))}; producer creation "
        f"{share(lambda f: has(f, 'KafkaProducer.<init>'))}; Spark reading the cached rows "
        f"{share(input_rows)}",
    ]


def wall_summary(collapsed: Path) -> list[str]:
    s = Stacks(collapsed)
    has, share = s.has, s.share

    def waiting(f: list[str]) -> bool:
        return has(f, *WRITERS) and has(f, "Object.wait", "ConditionObject.await", "Unsafe.park", "LockSupport.park")

    return [
        f"  wall clock of the Spark task threads ({s.in_tasks} samples of 5 ms): writing rows "
        f"{share(lambda f: has(f, *WRITERS))} (waiting inside send {share(waiting)}), "
        f"flush at commit {share(lambda f: has(f, 'KafkaProducer.flush'))}, the rest (input, task set-up) "
        f"{share(lambda f: not has(f, *WRITERS, 'KafkaProducer.flush'))}",
    ]


def main() -> None:
    parser = arguments(__doc__, 3_000_000, "sink", "profile-write")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--wall", action="store_true", help="also profile the wall clock of every thread")
    args = parser.parse_args()
    with profiled_session(args.out) as (broker, spark, profiler):
        servers = broker.bootstrap_servers
        pids = process_ids(spark, broker)
        df = rows(spark, args.records, args.partitions, args.value_size)
        sinks = {"streamctl": write_streamctl, "built-in": write_builtin}
        runs = [0]

        def run(name: str, report: list[str]) -> float:
            runs[0] += 1
            seconds, cpu = timed_cpu(
                lambda: write_once(
                    spark,
                    servers,
                    f"profile-write-{runs[0]}",
                    args.partitions,
                    args.records,
                    lambda topic: sinks[name](df, servers, topic, TUNED_PRODUCER),
                ),
                pids,
            )
            report.append(f"{seconds:.2f} s (CPU s: {', '.join(f'{k} {v:.1f}' for k, v in cpu.items())})")
            return seconds

        for name in sinks:
            for _ in range(2):
                run(name, [])
        for name in sinks:
            out, report = args.out / f"{name}.collapsed", []
            profile(profiler, out, args.runs, lambda name=name, report=report: run(name, report))
            print(f"{name}, tuned batch write, {args.records:,} rows: runs {'; '.join(report)}; stacks in {out}")
            print("\n".join(summary(out)), flush=True)
            if args.wall:
                out, report = args.out / f"{name}.wall.collapsed", []
                profile(profiler, out, args.runs, lambda name=name, report=report: run(name, report), event="wall")
                print(f"  wall-clock runs {'; '.join(report)}")
                print("\n".join(wall_summary(out)), flush=True)
        df.unpersist()


if __name__ == "__main__":
    main()
