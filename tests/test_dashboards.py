"""docs/grafana/streamctl.json and docs/prometheus/streamctl-alerts.yml use only metric names that
streamctl exports (streamctl.spark.QueryMetrics, under the relabel rule of docs/operations.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "jvm/src/main/scala/streamctl/spark/QueryMetrics.scala"
NAME = re.compile(r"\bstreamctl_[A-Za-z_]+\b")


def _exported() -> set[str]:
    """The Prometheus names of the gauges QueryMetrics registers: per partition (`$prefix.x`,
    `${ssp(s)}.x`) streamctl_x, per query (`$q.x`) streamctl_query_x."""
    names = set()
    for scope, metric in re.findall(r'"\$\{?(q|prefix|ssp\(s\))\}?\.([A-Za-z]+)"', SOURCE.read_text()):
        names.add(f"streamctl_query_{metric}" if scope == "q" else f"streamctl_{metric}")
    return names


def test_the_dashboard_and_alerts_use_only_exported_metrics():
    exported = _exported()
    assert {
        "streamctl_recordsBehind",
        "streamctl_secondsBehind",
        "streamctl_recordsSkipped",
        "streamctl_query_recordsSkipped",
        "streamctl_watermarkMs",
    } <= exported

    dashboard = json.loads((ROOT / "docs/grafana/streamctl.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    used_by_dashboard = {n for e in exprs for n in NAME.findall(e)}

    # Prometheus rule files are YAML; their expressions are the `expr:` lines.
    rules = (ROOT / "docs/prometheus/streamctl-alerts.yml").read_text()
    alerts = re.findall(r"^\s*- alert: (\w+)$", rules, re.MULTILINE)
    used_by_alerts = {n for e in re.findall(r"^\s*expr: (.+)$", rules, re.MULTILINE) for n in NAME.findall(e)}

    assert alerts == [
        "StreamctlLagGrowing",
        "StreamctlFarBehind",
        "StreamctlWatermarkStalled",
        "StreamctlProducerIdleTooLong",
        "StreamctlEndOfStreamReached",
    ]
    assert used_by_dashboard and used_by_dashboard <= exported, used_by_dashboard - exported
    assert used_by_alerts and used_by_alerts <= exported, used_by_alerts - exported
