"""A job written for format("kafka") runs with format("streamctl") and gives the same rows: sources
(streaming and batch, Spark's offset and subscription options, headers) and sinks (streaming and
batch, plain records, tombstones, headers, topic and partition columns), each run with Spark's own
spark-sql-kafka-0-10 connector and with streamctl on the same broker (tests/_kafka_compat_job.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_streamctl_gives_the_rows_spark_kafka_gives(servers, make_stream, tmp_path):
    prefix = make_stream().rsplit("-", 1)[0] + "-compat"
    out = tmp_path / "rows.json"
    job = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("_kafka_compat_job.py")),
            servers,
            prefix,
            str(tmp_path),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert job.returncode == 0, job.stderr[-4000:]
    results = json.loads(out.read_text())
    assert len(results) == 9
    for case, by_format in results.items():
        assert by_format["kafka"], f"{case}: Spark's connector read rows"
        assert by_format["streamctl"] == by_format["kafka"], case
