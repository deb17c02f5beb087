"""The picture of docs/grafana/streamctl.json in docs/operations.md, fed by a real run.

Runs a two-query pipeline over a real broker (stage 1 reads plain ``clicks`` and writes the
intermediate stream ``clicks-by-user``; stage 2 counts it per window on the upstream watermark),
with a driver whose ``PrometheusServlet`` is on; a real Prometheus (Debian's package, installed
when missing) scrapes it every second with the relabel rule of docs/operations.md and evaluates
docs/prometheus/streamctl-alerts.yml. During the run: a steady feed, a burst that the stage-1
query drains at ``maxOffsetsPerTrigger``, records deleted by retention under it (data loss), a
quiet spell long enough for the stage-1 writers to declare themselves idle, then end-of-stream
(stage 2 runs on past it for ten seconds, so the scrapes see it, then stops). Afterwards every
panel's query of the dashboard is asked of Prometheus over the run and drawn (inline SVG, laid out
by the panels' ``gridPos``), with the alerts Prometheus fired, and headless Chromium takes the
picture.

Grafana itself is not used: it is not installable here (not in Debian, PyPI or Maven Central).
What the picture checks is what Grafana would be given: the dashboard's own PromQL, answered by
Prometheus from the documented relabel rule over real scrapes. From the repository root::

    .venv/bin/python -m streamctl_testing.dashboard_picture --docs docs --out docs/dashboard.png
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import streamctl
import streamctl_testing
from streamctl import options
from streamctl_testing import kafka, kafka_broker
from streamctl_testing.broker import _free_port
from streamctl_testing.demos import wait_until
from streamctl_testing.demos.pipeline import clicks_by_user, counts_per_window

STEP_S = 1
COLORS = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#fade2a"]


def _prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found:
        return found
    print("installing prometheus (Debian's package)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "install", "-y", "-q", "prometheus"], env=env, capture_output=True).returncode:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "prometheus"], env=env, check=True, capture_output=True)
    # Its package starts a service where there is an init; this run starts its own.
    subprocess.run(["pkill", "-x", "prometheus"], capture_output=True)
    return shutil.which("prometheus") or "/usr/bin/prometheus"


def _scrape_config(docs: Path, target: str, rules: Path) -> str:
    """docs/operations.md's scrape configuration, as written there, pointed at ``target``."""
    text = (docs / "operations.md").read_text()
    block = re.search(r"```yaml\n(scrape_configs:.*?)```", text, re.DOTALL)
    if not block:
        raise RuntimeError(f"no ```yaml scrape_configs block in {docs / 'operations.md'}")
    scrape = block.group(1).replace('["driver-host:4040"]', json.dumps([target]))
    scrape = scrape.replace("  - job_name: spark-driver\n", "  - job_name: spark-driver\n    scrape_interval: 1s\n")
    head = f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [{json.dumps(str(rules))}]\n"
    return head + scrape


class Prometheus:
    def __init__(self, config: str, work: Path) -> None:
        (work / "prometheus.yml").write_text(config)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = (work / "prometheus.log").open("w")
        self.process = subprocess.Popen(
            [
                _prometheus_binary(),
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2):
                    return
            except OSError as e:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (work / "prometheus.log").read_text()[-2000:]
                    raise RuntimeError(f"prometheus did not start:\n{log}") from e
                time.sleep(0.3)

    def query_range(self, expr: str, start: float, end: float) -> list[dict[str, Any]]:
        args = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": STEP_S})
        with urllib.request.urlopen(f"{self.url}/api/v1/query_range?{args}", timeout=30) as r:
            answer = json.loads(r.read())
        if answer["status"] != "success":
            raise RuntimeError(f"prometheus refused {expr!r}: {answer}")
        return answer["data"]["result"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def _run_pipeline(spark: SparkSession, servers: str, work: Path, say: Any) -> None:
    kafka.create_stream(spark, servers, "clicks", 4)
    kafka.create_stream(spark, servers, "clicks-by-user", 2)
    stage2 = (
        counts_per_window(spark, servers, "10 seconds", stop_on_end_of_stream=False)
        .writeStream.queryName("count_per_window")
        .outputMode("update")
        .format("noop")
        .option("checkpointLocation", str(work / "cp-count"))
        .trigger(processingTime="1 second")
        .start()
    )
    stage1 = (
        clicks_by_user(spark, servers, "5 seconds", max_records_per_batch=400, fail_on_data_loss=False)
        .writeStream.format("streamctl")
        .queryName("clicks_by_user")
        .options(**options.sink(servers, "clicks-by-user", intermediate=True, producer_idle_timeout="10s"))
        .option("checkpointLocation", str(work / "cp-by-user"))
        .trigger(processingTime="1 second")
        .start()
    )
    feeding = threading.Event()
    feeding.set()
    sent = [0]

    def produce(n: int) -> None:
        now = int(time.time() * 1000)
        i0 = sent[0]
        kafka.produce(
            spark,
            servers,
            "clicks",
            [f"click-{i}".encode() for i in range(i0, i0 + n)],
            keys=[f"user-{i % 12}".encode() for i in range(i0, i0 + n)],
            partitions=[i % 4 for i in range(i0, i0 + n)],
            timestamps=[now] * n,
        )
        sent[0] += n

    def feed() -> None:
        while feeding.is_set():
            produce(60)
            time.sleep(1)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    time.sleep(25)
    say("a burst of 20,000 clicks; stage 1 reads at most 400 a batch")
    produce(20_000)
    time.sleep(8)
    heads = kafka.upcoming_offsets(spark, servers, "clicks")
    say("retention deletes clicks-3 up to its newest 1,500 records, some that stage 1 has not read")
    kafka.delete_records_before(spark, servers, "clicks", 3, heads[3] - 1_500)
    wait_until("stage 1 to drain the burst", lambda: _behind(stage1) < 200, 180)
    time.sleep(15)
    say("the feed stops: stage 1's writers declare themselves idle after 10 s")
    feeding.clear()
    feeder.join()
    time.sleep(30)
    say("end-of-stream for stage 1; stage 2 runs on past it (stop.on.end.of.stream=false) for the scrapes")
    streamctl.end_of_stream(stage1)
    wait_until("stage 2 to reach end-of-stream", lambda: _metric(stage2, "endOfStream") == "true", 120)
    time.sleep(10)
    stage2.stop()


def _metric(query: Any, name: str) -> str | None:
    progress = query.lastProgress or {}
    sources = progress.get("sources") or [{}]
    return (sources[0].get("metrics") or {}).get(name)


def _behind(query: Any) -> float:
    return float(_metric(query, "maxOffsetsBehindLatest") or "inf")


def _path(points: list[tuple[float, float]], x0: float, x1: float, y0: float, y1: float, w: int, h: int) -> str:
    def xy(t: float, v: float) -> str:
        return f"{(t - x0) / (x1 - x0) * w:.1f},{h - (v - y0) / (y1 - y0) * h:.1f}"

    return " ".join(xy(t, v) for t, v in points)


def _legend(metric: dict[str, str]) -> str:
    parts = [metric.get(k) for k in ("query", "topic", "partition") if metric.get(k)]
    return " ".join(p for p in parts if p) or metric.get("__name__", "")


def _panel_svg(title: str, series: list[dict[str, Any]], start: float, end: float, w: int, h: int) -> str:
    shown = series[:9]
    legend_rows = (len(shown) + 2) // 3
    plot_w, plot_h = w - 90, h - 58 - 13 * legend_rows
    values = [float(v) for s in series for _, v in s["values"] if v not in ("NaN", "+Inf", "-Inf")]
    top, low = max(values, default=1.0), min(values, default=0.0)
    # Epoch milliseconds (a watermark) read as times of day, on their own range; counts from 0.
    as_time = low > 1e12
    if as_time:
        low, top = low - 5_000, top + 5_000
    else:
        low, top = 0.0, (top * 1.1 if top > 0 else 1.0)
    body = [f'<rect width="{w}" height="{h}" fill="#181b1f" stroke="#2c3235"/>']
    body.append(f'<text x="10" y="20" class="t">{html.escape(title)}</text>')
    body.append('<g transform="translate(75,32)">')
    for i in range(5):
        y = plot_h - i * plot_h / 4
        label = low + (top - low) * i / 4
        if as_time:
            text = time.strftime("%H:%M:%S", time.gmtime(label / 1000))
        else:
            text = f"{label:,.0f}" if top >= 10 else f"{label:.2g}"
        body.append(f'<line x1="0" x2="{plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#2c3235"/>')
        body.append(f'<text x="-6" y="{y + 4:.1f}" class="a" text-anchor="end">{text}</text>')
    for i in range(0, int(end - start) + 1, 30):
        x = i / (end - start) * plot_w
        body.append(f'<text x="{x:.1f}" y="{plot_h + 14}" class="a" text-anchor="middle">{i}s</text>')
    for n, s in enumerate(shown):
        pts = [(float(t), float(v)) for t, v in s["values"] if v not in ("NaN", "+Inf", "-Inf")]
        color = COLORS[n % len(COLORS)]
        body.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.6" '
            f'points="{_path(pts, start, end, low, top, plot_w, plot_h)}"/>'
        )
        lx, ly = (n % 3) * (plot_w / 3), plot_h + 32 + (n // 3) * 13
        body.append(f'<rect x="{lx:.0f}" y="{ly - 8}" width="10" height="3" fill="{color}"/>')
        body.append(f'<text x="{lx + 14:.0f}" y="{ly - 4}" class="l">{html.escape(_legend(s["metric"]))}</text>')
    if not series:
        body.append(f'<text x="{plot_w / 2}" y="{plot_h / 2}" class="a" text-anchor="middle">No data</text>')
    body.append("</g>")
    return f'<svg width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'


def render(dashboard: dict[str, Any], prometheus: Prometheus, start: float, end: float, alerts: str) -> str:
    unit_w, unit_h = 66, 30
    cells = []
    bottom = 0
    for panel in dashboard["panels"]:
        g = panel["gridPos"]
        series = [
            s for t in panel["targets"] for s in prometheus.query_range(t["expr"].replace("$query", ".*"), start, end)
        ]
        w, h = g["w"] * unit_w - 8, g["h"] * unit_h - 8
        cells.append(
            f'<div style="position:absolute;left:{g["x"] * unit_w}px;top:{g["y"] * unit_h}px">'
            f"{_panel_svg(panel['title'], series, start, end, w, h)}</div>"
        )
        bottom = max(bottom, (g["y"] + g["h"]) * unit_h)
    style = (
        "body{background:#111217;margin:12px;font-family:sans-serif}"
        ".t{fill:#ccccdc;font-size:13px;font-weight:600}.a{fill:#8e8e9e;font-size:10px}"
        ".l{fill:#ccccdc;font-size:10px}h1{color:#ccccdc;font-size:17px;margin:0 0 10px}"
        "p{color:#8e8e9e;font-size:12px;margin:0 0 10px}"
    )
    return (
        f"<html><head><style>{style}</style></head><body><h1>{html.escape(dashboard['title'])}</h1>"
        f"<p>{html.escape(alerts)}</p>"
        f'<div style="position:relative;height:{bottom}px">{"".join(cells)}</div></body></html>'
    )


def _fired_alerts(prometheus: Prometheus, start: float, end: float) -> str:
    fired = prometheus.query_range('ALERTS{alertstate="firing"}', start, end)
    names = sorted({f"{s['metric']['alertname']} ({s['metric'].get('query', '')})" for s in fired})
    return "Alerts Prometheus fired from docs/prometheus/streamctl-alerts.yml during the run: " + (
        ", ".join(names) or "none"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamctl_testing.dashboard_picture", description=__doc__)
    parser.add_argument("--docs", default="docs", help="the repository's docs/ folder")
    parser.add_argument("--out", default="docs/dashboard.png", help="where the picture goes")
    args = parser.parse_args(argv)
    docs = Path(args.docs).resolve()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("chromium is missing (apt-get install chromium)")
    work = Path(tempfile.mkdtemp(prefix="streamctl-dashboard-"))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    ui_port = _free_port()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamctl-dashboard")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", str(ui_port))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.metrics.conf.*.sink.prometheusServlet.class", "org.apache.spark.metrics.sink.PrometheusServlet")
        .config("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
    )

    def say(s: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {s}", flush=True)

    with kafka_broker() as broker:
        spark = streamctl_testing.configure_spark(builder).getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        prometheus = Prometheus(
            _scrape_config(docs, f"127.0.0.1:{ui_port}", docs / "prometheus" / "streamctl-alerts.yml"), work
        )
        try:
            start = time.time()
            say(f"prometheus at {prometheus.url} scrapes the driver's /metrics/prometheus every second")
            _run_pipeline(spark, broker.bootstrap_servers, work, say)
            time.sleep(3)
            end = time.time()
            dashboard = json.loads((docs / "grafana" / "streamctl.json").read_text())
            page = work / "dashboard.html"
            page.write_text(render(dashboard, prometheus, start, end, _fired_alerts(prometheus, start, end)))
        finally:
            prometheus.stop()
            spark.stop()
    height = max(int(m) for m in re.findall(r"height:(\d+)px", page.read_text())) + 90
    out = Path(args.out).resolve()
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={out}", f"--window-size=1600,{height}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    say(f"wrote {out} ({out.stat().st_size:,} bytes); page and Prometheus data in {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
