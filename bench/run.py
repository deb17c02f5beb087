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

from bench import memory, read_throughput, write_throughput
from bench.common import ROOT, bench_session, report
from streamctl import kafka
from streamctl.testing import kafka_broker

JVM_BENCHES = ["ChooserBench", "GrouperBench", "StartpointBench", "ControlBench", "HostAffinityBench"]


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores ({cpu}), {system}, Python {platform.python_version()}"


def jvm_classpath() -> str:
    """The Maven test classpath: target/classes still names the unshaded kafka-clients."""
    import pyspark

    out = ROOT / "target" / "bench.classpath"
    jars = Path(pyspark.__file__).parent / "jars"
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(ROOT / "pom.xml"), f"-Dspark.jars.dir={jars}", "dependency:build-classpath",
         "-Dmdep.includeScope=test", f"-Dmdep.outputFile={out}"],
        check=True,
    )
    return os.pathsep.join([str(ROOT / "target" / "classes"), str(ROOT / "target" / "test-classes"), out.read_text()])


def run_jvm_bench(name: str, classpath: str) -> None:
    print(f"\n== {name}", flush=True)
    subprocess.run(["java", "-cp", classpath, f"streamctl.bench.{name}"], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--memory-records", type=int, default=10_000_000)
    parser.add_argument("--only", choices=["jvm", "read", "write", "memory"], help="run one group of benchmarks")
    args = parser.parse_args()
    print(f"machine: {machine()}", flush=True)

    if args.only in (None, "jvm"):
        classpath = jvm_classpath()
        for name in JVM_BENCHES:
            run_jvm_bench(name, classpath)
    sparks = {"read", "write", "memory"}
    if args.only is None or args.only in sparks:
        summaries: list[str] = []
        with tempfile.TemporaryDirectory(prefix="streamctl-bench-") as tmp, kafka_broker() as broker:
            servers = broker.bootstrap_servers
            spark = bench_session()
            try:
                results = []
                if args.only in (None, "read"):
                    results += read_throughput.run(spark, servers, tmp, args.records, args.partitions,
                                                   args.value_size, args.reps)
                if args.only in (None, "write"):
                    results += write_throughput.run(spark, servers, args.records, args.partitions,
                                                    args.value_size, args.reps)
                if results:
                    summaries.append(report(results, baseline="built-in"))
                if args.only in (None, "memory"):
                    topic = "bench-memory"
                    kafka.create_stream(spark, servers, topic, args.partitions)
                    kafka.produce_synthetic(spark, servers, topic, args.memory_records, args.value_size)
            finally:
                spark.stop()
            if args.only in (None, "memory"):
                summaries.append(memory.run(servers, "bench-memory", args.memory_records, args.value_size, tmp))
        print("\n" + "\n\n".join(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
