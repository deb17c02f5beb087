"""./build.sh bench: every benchmark on the embedded broker, printed as tables and written to a
results file (markdown and JSON: date, machine, command, every configuration, every timing).

A full run (./build.sh bench with no arguments) writes bench/results/results.{md,json}, which
docs/performance.md quotes; any other run writes target/bench-results/ (or --out). --quick runs every
benchmark at small sizes with one repetition, to check that it works (its figures mean little).
Benchmarks assert nothing about time; they do check that every variant computed the same result.
Ratios compare variants measured in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import (
    cli,
    control_overhead,
    memory,
    monitoring_cost,
    pipeline,
    read_throughput,
    realtime_latency,
    scale,
    upstream_watermark,
    write_throughput,
)
from bench.common import (
    RATIO_HEADER,
    REPORT_HEADER,
    ROOT,
    SETTINGS,
    Measurement,
    bench_session,
    builtin_kafka_version,
    connector_version,
    describe,
    jvm_classpath,
    markdown_table,
    process_ids,
    ratio_rows,
    report_rows,
    spark_kafka_jars,
    table,
)
from streamctl_testing import kafka, kafka_broker

JVM_BENCHES = [
    "ChooserBench",
    "GrouperBench",
    "StartpointBench",
    "ControlBench",
    "HostAffinityBench",
    "ReaderPathBench",
    "PlannerBench",
    "ConsumerPoolBench",
]
GROUPS = (
    "jvm",
    "read",
    "write",
    "control",
    "upstream",
    "pipeline",
    "memory",
    "cli",
    "realtime",
    "scale",
    "first-batch",
    "monitoring",
)
R = read_throughput
COMPARISONS = [
    ("streamctl, tuned", "built-in, tuned"),
    ("streamctl, defaults", "built-in, defaults"),
    ("streamctl time-aligned, tuned", "built-in, tuned"),
    ("streamctl, tuned", R.CEILING),
    ("built-in, tuned", R.CEILING),
    ("built-in, tuned", "built-in, defaults"),
    # Issue #32: what transactions cost the sink, and the pipeline.
    ("streamctl transactional, tuned", "streamctl, tuned"),
    ("streamctl transactional, defaults", "streamctl, defaults"),
    ("streamctl transactional at 1 s triggers, tuned", "streamctl at 1 s triggers, tuned"),
    ("streamctl transactional, tuned", "built-in, tuned"),
    ("streamctl at 1 s triggers, tuned", "built-in at 1 s triggers, tuned"),
]


def machine() -> dict[str, str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    mem_kb = next(
        (
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    import pyspark

    spark_kafka_jars()
    return {
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "memory_gb": f"{mem_kb / 1e6:.0f}",
        "os": f"{platform.system()} {platform.release()}",
        "java": java[0] if java else "?",
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "builtin_connector": connector_version(),
        "builtin_kafka_clients": builtin_kafka_version(),
        "streamctl_kafka_clients": "the built-in's (one kafka-clients per session, not relocated)",
        "broker": "Kafka 4.3.1 (streamctl_testing.kafka_broker, same host)",
    }


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


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


def groups(text: str) -> set[str]:
    chosen = {g.strip() for g in text.split(",") if g.strip()}
    unknown = chosen - set(GROUPS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown group(s) {', '.join(sorted(unknown))}; choose from {', '.join(GROUPS)}"
        )
    return chosen


class Results:
    """Everything a run measured, in the order it ran; written as markdown and JSON."""

    def __init__(self, command: str, args: argparse.Namespace) -> None:
        self.started = datetime.datetime.now(datetime.UTC)
        self.json: dict[str, Any] = {
            "date": self.started.isoformat(timespec="seconds"),
            "command": command,
            "machine": machine(),
            "arguments": {k: str(v) for k, v in vars(args).items()},
            "load_average_at_start": load(),
            "settings": SETTINGS,
            "sections": [],
        }
        self.md: list[str] = []
        self.console: list[str] = []

    def section(
        self,
        title: str,
        config: dict[str, Any],
        rows: list[tuple[str, ...]],
        header: tuple[str, ...],
        data: list[dict[str, Any]] | None = None,
        ratios: list[tuple[str, ...]] | None = None,
    ) -> None:
        """One table, in the console and markdown as ``rows`` under ``header``, and in the JSON as
        ``data`` (by default the rows themselves, each a dict keyed by ``header``)."""
        if data is None:
            data = [dict(zip(header, r, strict=True)) for r in rows]
        self.json["sections"].append({"title": title, "config": config, "results": data})
        self.md += [
            f"## {title}",
            "",
            "Configuration:",
            "",
            "```json",
            json.dumps(config, indent=2),
            "```",
            "",
            markdown_table(rows, header),
            "",
        ]
        self.console += [f"{title}\n{table(rows, header)}"]
        if ratios:
            self.md += [
                "Ratios (baseline median / variant median; above 1: the variant is faster):",
                "",
                markdown_table(ratios, RATIO_HEADER),
                "",
            ]
            self.console += [table(ratios, RATIO_HEADER)]

    def measured(self, title: str, config: dict[str, Any], ms: list[Measurement]) -> None:
        self.section(
            title, config, report_rows(ms), REPORT_HEADER, [m.to_json() for m in ms], ratio_rows(ms, COMPARISONS)
        )

    def write(self, out: Path) -> None:
        ended = datetime.datetime.now(datetime.UTC)
        self.json["load_average_at_end"] = load()
        self.json["minutes"] = round((ended - self.started).total_seconds() / 60, 1)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(self.json, indent=2) + "\n")
        m = self.json["machine"]
        read_warm_ups = self.json["arguments"]["read_warm_ups"]
        warm_ups = "one warm-up run per variant" + ("" if read_warm_ups == "1" else f", {read_warm_ups} for reads")
        head = [
            "# streamctl benchmark results",
            "",
            f"- date: {self.json['date']} ({self.json['minutes']} min)",
            f"- command: `{self.json['command']}`",
            f"- machine: {m['cores']} cores ({m['cpu']}), {m['memory_gb']} GB, {m['os']}, {m['java']}, "
            f"Python {m['python']}, pyspark {m['pyspark']}",
            f"- load average (1, 5, 15 min) at start: {self.json['load_average_at_start']}, at end: "
            f"{self.json['load_average_at_end']}",
            f"- built-in connector: {m['builtin_connector']} (kafka-clients {m['builtin_kafka_clients']}); streamctl: "
            f"kafka-clients {m['streamctl_kafka_clients']}; broker: {m['broker']}",
            '- settings: "defaults" = no Kafka setting on either side; "tuned" = the same settings on both '
            "(JSON: `settings`):",
            *(
                f"  - {name}: consumer: {describe(s['consumer'])}; producer: {describe(s['producer'])}; "
                f"consumers: {s['consumers']}"
                for name, s in SETTINGS.items()
            ),
            f"- every timing: {warm_ups}, not counted; then the repetitions in alternating order; median and "
            "min-max (±half-range / median)",
            "",
        ]
        (out / "results.md").write_text("\n".join(head + self.md))


@contextlib.contextmanager
def scale_session(results: Results) -> Iterator[tuple[Any, Any]]:
    """The broker and Spark session sized for thousands of partitions (bench/scale.py's), with the open-file
    limit raised and recorded in the results; the session stops when the block ends."""
    results.json["open_file_limit"] = scale.raise_file_limit()
    with kafka_broker(properties=scale.BROKER_PROPERTIES) as broker:
        spark = bench_session(extra=scale.SESSION)
        try:
            yield broker, spark
        finally:
            spark.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and one repetition: checks every benchmark works (figures mean little)",
    )
    parser.add_argument(
        "--records",
        type=int,
        help="records of the read, write and control benchmarks (default 3,000,000; --quick 100,000)",
    )
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument(
        "--reps", type=int, help="timed repetitions per variant after its warm-up run(s) (default 5; --quick 1)"
    )
    parser.add_argument(
        "--read-warm-ups",
        type=int,
        default=1,
        help="untimed runs of every read variant before its repetitions (default 1)",
    )
    parser.add_argument(
        "--control-batches",
        type=int,
        help="batches (one watermark per partition each) of the control benchmark (default 50)",
    )
    parser.add_argument("--pipeline-records", type=int, help="default 1,000,000; --quick 100,000")
    parser.add_argument(
        "--upstream-records",
        type=int,
        help="records of the upstream-watermark benchmark (default 1,000,000; --quick 100,000)",
    )
    parser.add_argument(
        "--upstream-batches",
        type=int,
        default=10,
        help="batches (one upstream watermark per partition each) of the upstream-watermark benchmark",
    )
    parser.add_argument(
        "--latency-seconds", type=float, help="measured part of each live pipeline (default 30; --quick 6)"
    )
    parser.add_argument("--latency-trigger", type=float, default=1.0, help="trigger interval (s) of the live pipelines")
    parser.add_argument("--latency-rate", type=int, default=5_000, help="records/s fed to the live pipelines")
    parser.add_argument(
        "--memory-gb", type=str, help="the two backlog sizes in GB of values (default 0.5,2; --quick 0.02,0.05)"
    )
    parser.add_argument("--cli-reps", type=int, default=7, help="runs of each streamctl command (bench/cli.py)")
    parser.add_argument(
        "--scale-sizes",
        type=str,
        help="partition counts of the scale benchmark (default 8,128,1024,4096; --quick 8,128)",
    )
    parser.add_argument(
        "--scale-records",
        type=int,
        default=scale.RECORDS_PER_PARTITION,
        help=f"records per partition of the scale benchmark (default {scale.RECORDS_PER_PARTITION}: 10 batches)",
    )
    parser.add_argument(
        "--monitoring-partitions",
        type=int,
        help="partitions of the monitoring-cost benchmark (default 1024; --quick 128)",
    )
    parser.add_argument(
        "--only",
        type=groups,
        default=set(GROUPS),
        help=f"comma-separated groups to run ({','.join(GROUPS)}); default all",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="directory of results.md and results.json (default: bench/results for "
        "a run with no arguments, else target/bench-results)",
    )
    args = parser.parse_args()
    q = args.quick
    args.records = args.records or (100_000 if q else 3_000_000)
    args.reps = args.reps or (1 if q else 5)
    args.control_batches = args.control_batches or (10 if q else 50)
    args.pipeline_records = args.pipeline_records or (100_000 if q else 1_000_000)
    args.upstream_records = args.upstream_records or (100_000 if q else 1_000_000)
    args.latency_seconds = args.latency_seconds or (6.0 if q else 30.0)
    args.memory_gb = args.memory_gb or ("0.02,0.05" if q else "0.5,2")
    args.scale_sizes = tuple(int(x) for x in (args.scale_sizes or ("8,128" if q else "8,128,1024,4096")).split(","))
    args.monitoring_partitions = args.monitoring_partitions or (128 if q else 1024)
    # Only the one command docs/performance.md names writes the results it quotes.
    full = sys.argv[1:] == []
    out = args.out or (ROOT / "bench" / "results" if full else ROOT / "target" / "bench-results")
    only: set[str] = args.only
    command = "./build.sh bench" + "".join(f" {shlex.quote(a)}" for a in sys.argv[1:])
    results = Results(command, args)
    print(f"machine: {results.json['machine']}; load average {load()}", flush=True)
    started = time.monotonic()

    if "jvm" in only:
        classpath = jvm_classpath()
        micro = [row for name in JVM_BENCHES for row in run_jvm_bench(name, classpath)]
        results.section(
            "Micro-benchmarks (JVM, bench/jvm)",
            {"benchmarks": JVM_BENCHES},
            micro,
            ("micro-benchmark", "what", "median", "target"),
            [dict(zip(("bench", "what", "median", "target"), r, strict=False)) for r in micro],
        )
    if "cli" in only:
        cli_table = cli.run(1 if q else args.cli_reps)  # bench/cli.py: its own broker and query
        results.md += ["## streamctl commands (bench/cli.py)", "", "```", cli_table, "```", ""]
        results.console.append(cli_table)
    if "realtime" in only:  # bench/realtime_latency.py: its own broker and session
        quick = ["--seconds", "5", "--warmup", "5", "--reps", "1"]
        rows, header, config = realtime_latency.standalone(quick if q else [])
        results.section(
            "Real-time mode: two-query pipeline end-to-end latency",
            config,
            rows,
            header,
        )
    if "scale" in only:  # bench/scale.py: its own broker (every size's topic) and session
        with scale_session(results) as (broker, spark):
            found, config = scale.run(spark, broker.bootstrap_servers, args.scale_sizes, args.scale_records)
        table_rows, phase_rows = scale.rows(found)
        results.section(
            "Scale: steady-state batch at 8 to 4,096 partitions (medians of batches 1-9)",
            config,
            table_rows,
            scale.HEADER,
            found,
        )
        results.section(
            "Scale: durationMs phases per batch (medians of batches 1-9, ms)",
            config,
            phase_rows,
            scale.PHASE_HEADER,
        )
        floor = scale.floor_rows(found, config)
        results.section(
            "Scale: Spark's floor, a source that reads nothing (rate-micro-batch), against the built-in",
            {"floor": "rate-micro-batch, rowsPerBatch 2 x P, numPartitions P, noop sink, same session"},
            floor,
            scale.FLOOR_HEADER,
        )
        few_forks = scale.few_forks_rows(config)
        results.section(
            "Scale: with few forks, Spark's log writes without most of Hadoop's (both sources tuned, and the floor)",
            {
                "few_forks_settings": scale.FEW_FORKS,
                "order": "streamctl, grouper=single, built-in, floors, built-in, grouper=single, streamctl",
            },
            few_forks,
            scale.FEW_FORKS_HEADER,
        )
        one_input = scale.one_input_partition_rows(found, config)
        results.section(
            "Scale: one Spark input partition instead of P (streamctl grouper=single, and the floor), tuned",
            {
                "single_task": "streamctl with grouper=single: every partition in one task, one Spark input partition",
                "floor_one_input_partition": "rate-micro-batch, rowsPerBatch 2 x P, numPartitions 1",
                "few_forks_settings": scale.FEW_FORKS,
            },
            one_input,
            scale.ONE_INPUT_PARTITION_HEADER,
        )
        framed = scale.framed_rows(config)
        results.section(
            "Scale: an intermediate stream with a watermark per partition per batch (streamctl, tuned)",
            {"reader": "streamctl, stream.<name>.intermediate=true"},
            framed,
            scale.FRAMED_HEADER,
        )
    if "first-batch" in only:  # bench/scale.py's first_batch: its own broker and session, as scale's
        size = 128 if q else scale.FIRST_BATCH_PARTITIONS
        with scale_session(results) as (broker, spark):
            found = scale.first_batch(spark, broker.bootstrap_servers, size)
        results.section(
            f"First batch with no Kafka setting on either side, {size:,} partitions",
            {
                "partitions": size,
                "records_per_partition": 2,
                "settings": "none on either side (no matched fetch.max.wait.ms): the built-in at Kafka's "
                "defaults, streamctl at its own (its readers' fetch.max.wait.ms is 10 ms)",
                "trigger": "AvailableNow, maxOffsetsPerTrigger = 2 x partitions: one batch",
                "sink": "noop",
            },
            scale.first_batch_rows(found),
            scale.FIRST_BATCH_HEADER,
            found,
        )
    if "monitoring" in only:  # bench/monitoring_cost.py: a broker and session sized as scale's
        with scale_session(results) as (broker, spark):
            rows, cpu_rows, config = monitoring_cost.run(
                spark,
                broker.bootstrap_servers,
                process_ids(spark, broker),
                args.monitoring_partitions,
                24,
                1 if q else 3,
            )
        results.section(
            f"Monitoring cost: metrics and commitOffsets on against off, {args.monitoring_partitions} partitions, "
            "1 s triggers",
            config,
            rows,
            monitoring_cost.HEADER,
        )
        results.section(
            f"Monitoring cost: CPU per batch after the first, {args.monitoring_partitions} partitions "
            "(medians over runs)",
            {"threads": monitoring_cost.THREADS},
            cpu_rows,
            monitoring_cost.CPU_HEADER,
        )
    if only & {"read", "write", "control", "upstream", "pipeline", "memory"}:
        with tempfile.TemporaryDirectory(prefix="streamctl-bench-") as tmp, kafka_broker() as broker:
            servers = broker.bootstrap_servers
            spark = bench_session()
            backlogs: list[tuple[str, int]] = []
            try:
                if "read" in only:
                    pids = process_ids(spark, broker)
                    ms, config = read_throughput.run(
                        spark,
                        servers,
                        tmp,
                        args.records,
                        args.partitions,
                        args.value_size,
                        args.reps,
                        pids,
                        args.read_warm_ups,
                    )
                    results.measured("Read throughput", config, ms)
                    # Every run's CPU seconds are in the measurements' JSON (cpu_s_per_run); this is their medians.
                    cpu = read_throughput.cpu_rows(ms, config["spark_cores"])
                    results.section(
                        "Read throughput: CPU seconds per run (medians)",
                        {"processes": list(pids)},
                        cpu,
                        read_throughput.CPU_HEADER,
                    )
                if "write" in only:
                    ms, config = write_throughput.run(
                        spark, servers, args.records, args.partitions, args.value_size, args.reps
                    )
                    results.measured("Write throughput", config, ms)
                if "control" in only:
                    ms = control_overhead.run(
                        spark,
                        servers,
                        tmp,
                        args.records,
                        args.partitions,
                        args.value_size,
                        args.reps,
                        args.control_batches,
                    )
                    base = next(m for m in ms if m.variant == control_overhead.PLAIN)
                    results.section(
                        "Control-message overhead (streamctl only)",
                        {
                            "records": args.records,
                            "partitions": args.partitions,
                            "batches": args.control_batches,
                            "warm_up_runs": 1,
                            "repetitions": args.reps,
                        },
                        [
                            (*r, f"{100 * (m.median / base.median - 1):+.1f}%")
                            for r, m in zip(report_rows(ms), ms, strict=True)
                        ],
                        (*REPORT_HEADER, "overhead"),
                        [m.to_json() for m in ms],
                    )
                if "upstream" in only:
                    rows, data, config = upstream_watermark.run(
                        spark,
                        servers,
                        tmp,
                        args.upstream_records,
                        args.partitions,
                        args.value_size,
                        args.upstream_batches,
                        args.reps,
                    )
                    results.section(
                        "Upstream watermark: an event-time windowed query over an intermediate stream "
                        "(with_upstream_watermark before and after #30)",
                        config,
                        rows,
                        upstream_watermark.HEADER,
                        data,
                    )
                if "pipeline" in only:
                    ms, config = pipeline.throughput(
                        spark, servers, tmp, args.pipeline_records, args.partitions, args.value_size, args.reps
                    )
                    results.measured("Two-query pipeline throughput", config, ms)
                    ms, config = pipeline.sink_throughput(
                        spark, servers, tmp, args.pipeline_records, args.partitions, args.value_size, args.reps
                    )
                    results.measured("Sink alone: query 1 of the pipeline, no reader", config, ms)
                    rows, config = pipeline.e2e_latency(
                        spark,
                        servers,
                        tmp,
                        args.partitions,
                        args.latency_trigger,
                        args.latency_seconds,
                        args.latency_rate,
                    )
                    results.section(
                        "Two-query pipeline end-to-end latency",
                        config,
                        [
                            (
                                r["variant"],
                                f"{r['records_measured']:,}",
                                f"{r['rate_achieved']:,}",
                                f"{r['p50_s']:.2f}",
                                f"{r['p99_s']:.2f}",
                                f"{r['max_s']:.2f}",
                                f"{r['p99_s'] / args.latency_trigger:.2f}",
                            )
                            for r in rows
                        ],
                        ("variant", "records", "records/s sent", "p50 s", "p99 s", "max s", "p99 in triggers"),
                        rows,
                    )
                    wrows, header = pipeline.watermark_latency(
                        spark,
                        servers,
                        tmp,
                        args.partitions,
                        args.latency_trigger,
                        args.latency_seconds,
                        args.latency_rate,
                    )
                    results.section(
                        "Watermark propagation across two queries (streamctl only)",
                        {
                            "trigger_s": args.latency_trigger,
                            "measured_s": args.latency_seconds,
                            "rate_records_per_s": args.latency_rate,
                        },
                        wrows,
                        header,
                    )
                if "memory" in only:
                    for gb in (float(x) for x in args.memory_gb.split(",")):
                        records = int(gb * 1e9 / args.value_size)
                        topic = f"bench-memory-{records}"
                        kafka.create_stream(spark, servers, topic, args.partitions)
                        kafka.produce_synthetic(spark, servers, topic, records, args.value_size)
                        backlogs.append((topic, records))
            finally:
                spark.stop()
            if "memory" in only:
                rows, config = memory.run(servers, backlogs, args.value_size, tmp)
                results.section(
                    "Memory: live heap while one batch drains a backlog",
                    config,
                    [
                        (
                            r["source"],
                            f"{r['backlog_mb']:,.0f}",
                            f"{r['live_heap_max_mb']:.0f}",
                            f"{r['live_heap_median_mb']:.0f}",
                            str(r["live_samples"]),
                            f"{r['in_use_peak_mb']:.0f}",
                            f"{r['seconds']:.1f}",
                        )
                        for r in rows
                    ],
                    (
                        "source",
                        "backlog MB",
                        "live heap max MB",
                        "live heap median MB",
                        "samples",
                        "in use peak MB",
                        "seconds (with forced GCs)",
                    ),
                    rows,
                )
    results.write(out)
    print("\n" + "\n\n".join(results.console))
    print(f"\nresults: {out / 'results.md'} and results.json ({(time.monotonic() - started) / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
