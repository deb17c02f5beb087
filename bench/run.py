"""./build.sh bench: every benchmark on the embedded broker, printed as one table.

Benchmarks assert nothing about time; each prints its configuration so a figure can be
reproduced. Ratios compare variants measured in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli, control_overhead, memory, pipeline, read_throughput, write_throughput
from bench.common import bench_session, jvm_classpath, report, table
from streamctl_testing import kafka, kafka_broker

JVM_BENCHES = [
    "ChooserBench", "GrouperBench", "StartpointBench", "ControlBench", "HostAffinityBench", "ReaderPathBench",
]


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores ({cpu}), {system}, Python {platform.python_version()}"


def run_jvm_bench(name: str, classpath: str) -> list[tuple[str, ...]]:
    """Runs one JVM benchmark, echoing its report; returns its SUMMARY lines (bench/jvm Summary.scala)."""
    print(f"\n== {name}", flush=True)
    summary: list[tuple[str, ...]] = []
    command = ["java", "-cp", classpath, f"streamctl.bench.{name}"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None
        for line in p.stdout:
            if line.startswith("SUMMARY\t"):
                summary.append(tuple(line.rstrip("\n").split("\t")[1:]))
            else:
                print(line, end="", flush=True)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, name)
    return summary


GROUPS = ("jvm", "read", "write", "control", "pipeline", "memory", "cli")


def groups(text: str) -> set[str]:
    chosen = {g.strip() for g in text.split(",") if g.strip()}
    unknown = chosen - set(GROUPS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown group(s) {', '.join(sorted(unknown))}; choose from {', '.join(GROUPS)}")
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=5_000_000, help="records of the read and write benchmarks")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--control-reps", type=int, default=5,
                        help="repetitions of the control-overhead benchmark (its difference is small against noise)")
    parser.add_argument("--control-batches", type=int, default=50,
                        help="batches (one watermark per partition each) of the control-overhead benchmark")
    parser.add_argument("--pipeline-records", type=int, default=2_000_000)
    parser.add_argument("--latency-seconds", type=float, default=40.0, help="measured part of the live pipeline")
    parser.add_argument("--latency-trigger", type=float, default=1.0, help="trigger interval (s) of the live pipeline")
    parser.add_argument("--latency-rate", type=int, default=5_000, help="records/s fed to the live pipeline")
    parser.add_argument("--memory-records", type=int, default=10_000_000)
    parser.add_argument("--cli-reps", type=int, default=7, help="runs of each streamctl command (bench/cli.py)")
    parser.add_argument("--only", type=groups, default=set(GROUPS),
                        help=f"comma-separated groups to run ({','.join(GROUPS)}); default all")
    args = parser.parse_args()
    only: set[str] = args.only
    print(f"machine: {machine()}", flush=True)

    summaries: list[str] = []
    if "jvm" in only:
        classpath = jvm_classpath()
        micro = [row for name in JVM_BENCHES for row in run_jvm_bench(name, classpath)]
        summaries.append(table(micro, ("micro-benchmark (JVM)", "what", "median", "target")))
    if "cli" in only:
        summaries.append(cli.run(args.cli_reps))  # bench/cli.py: its own broker and query
    if not only & {"read", "write", "control", "pipeline", "memory"}:
        print("\n" + "\n\n".join(summaries))
        return 0
    with tempfile.TemporaryDirectory(prefix="streamctl-bench-") as tmp, kafka_broker() as broker:
        servers = broker.bootstrap_servers
        spark = bench_session()
        try:
            results = []
            if "read" in only:
                results += read_throughput.run(spark, servers, tmp, args.records, args.partitions,
                                               args.value_size, args.reps)
            if "write" in only:
                results += write_throughput.run(spark, servers, args.records, args.partitions,
                                                args.value_size, args.reps)
            if "control" in only:
                results += control_overhead.run(spark, servers, tmp, args.records, args.partitions,
                                                args.value_size, args.control_reps, args.control_batches)
            if "pipeline" in only:
                results += pipeline.throughput(spark, servers, tmp, args.pipeline_records, args.partitions,
                                               args.value_size, args.reps)
            if results:
                summaries.append(report(results, baselines=(read_throughput.BUILTIN, read_throughput.CEILING,
                                                            control_overhead.PLAIN)))
            if "pipeline" in only:
                summaries.append(pipeline.latency(spark, servers, tmp, args.partitions, args.latency_trigger,
                                                  args.latency_seconds, args.latency_rate))
            if "memory" in only:
                kafka.create_stream(spark, servers, "bench-memory", args.partitions)
                kafka.produce_synthetic(spark, servers, "bench-memory", args.memory_records, args.value_size)
        finally:
            spark.stop()
        if "memory" in only:
            summaries.append(memory.run(servers, "bench-memory", args.memory_records, args.value_size, tmp))
    print("\n" + "\n\n".join(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
