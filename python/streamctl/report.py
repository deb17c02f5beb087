"""``streamctl report``: one self-contained HTML page (inline SVG, no script, no network) of a
query's recent batches: lag per partition, the query's own and the upstream watermark, with
end-of-stream and startpoint events marked.

The data is the bounded progress history the streamctl listener keeps in the query's metadata
store (``streamctl.ops.ProgressHistory``), read by the JVM; this module only draws it.

Example::

    streamctl report --checkpoint /chk/q1 -o report.html
"""

from __future__ import annotations

import html as _html
from datetime import UTC, datetime
from typing import Any

_W, _H, _PAD_L, _PAD_R, _PAD_T, _PAD_B = 860, 260, 110, 20, 16, 34
_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def _esc(s: object) -> str:
    return _html.escape(str(s), quote=True)


def _iso(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S")


def _chart(
    title: str,
    kind: str,
    batches: list[int],
    series: dict[str, list[float | None]],
    events: list[tuple[int, str, str]],
    y_label: str,
    y_format: Any = str,
) -> str:
    """One line chart as inline SVG: x = batch id, one polyline per series, a dashed vertical line per event."""
    values = [v for vs in series.values() for v in vs if v is not None]
    out = [f'<section class="chart" data-kind="{_esc(kind)}"><h2>{_esc(title)}</h2>']
    if not batches or not values:
        out.append('<p class="empty">No data in the recorded batches.</p></section>')
        return "".join(out)
    x0, x1 = min(batches), max(batches)
    y0, y1 = min(values), max(values)
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    pw, ph = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(b: float) -> float:
        return _PAD_L + (0.5 if x1 == x0 else (b - x0) / (x1 - x0)) * pw

    def y(v: float) -> float:
        return _PAD_T + (1 - (v - y0) / (y1 - y0)) * ph

    out.append(f'<svg width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img" aria-label="{_esc(title)}">')
    out.append(f'<rect x="{_PAD_L}" y="{_PAD_T}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>')
    for frac in (0, 0.5, 1):
        v = y0 + frac * (y1 - y0)
        out.append(
            f'<text x="{_PAD_L - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{_esc(y_format(v))}</text>'
        )
    for b in sorted({x0, x1, (x0 + x1) // 2}):
        out.append(f'<text x="{x(b):.1f}" y="{_H - 14}" text-anchor="middle" class="tick">{b}</text>')
    out.append(f'<text x="{_PAD_L + pw / 2}" y="{_H - 1}" text-anchor="middle" class="axis">batch</text>')
    mid_y = _PAD_T + ph / 2
    out.append(f'<text x="12" y="{mid_y}" class="axis" transform="rotate(-90 12 {mid_y})">{_esc(y_label)}</text>')
    for b, cls, label in events:
        out.append(
            f'<line class="event {cls}" x1="{x(b):.1f}" x2="{x(b):.1f}" y1="{_PAD_T}" y2="{_PAD_T + ph}">'
            f"<title>{_esc(label)}</title></line>"
        )
    for i, (name, vs) in enumerate(series.items()):
        color = _COLORS[i % len(_COLORS)]
        points = " ".join(f"{x(b):.1f},{y(v):.1f}" for b, v in zip(batches, vs, strict=True) if v is not None)
        out.append(
            f'<polyline class="series" data-series="{_esc(name)}" fill="none" stroke="{color}" stroke-width="2" '
            f'points="{points}">'
            f"<title>{_esc(name)}</title></polyline>"
        )
    out.append('</svg><ul class="legend">')
    for i, name in enumerate(series):
        out.append(f'<li><span style="background:{_COLORS[i % len(_COLORS)]}"></span>{_esc(name)}</li>')
    out.append("</ul></section>")
    return "".join(out)


def _source(source: str, batches: list[dict[str, Any]]) -> str:
    ids = [b["batch"] for b in batches]
    ssps = sorted({k for b in batches for k in b["lag"]})
    lag = {k: [b["lag"].get(k) for b in batches] for k in ssps}
    marks: list[tuple[int, str, str]] = []
    ended = False
    ended_ssps: set[str] = set()
    for b in batches:
        if b["endOfStream"] and not ended:
            marks.append((b["batch"], "eos", f"batch {b['batch']}: end-of-stream of every input"))
        ended = b["endOfStream"]
        now_ended = set(b.get("ended", []))
        for ssp in sorted(now_ended - ended_ssps):
            marks.append((b["batch"], "eos", f"batch {b['batch']}: end-of-stream of {ssp}"))
        ended_ssps = now_ended
        for sp in b["startpoints"]:
            marks.append((b["batch"], "startpoint", f"batch {b['batch']}: startpoint {sp}"))
    watermarks = {
        "own watermark": [b.get("watermarkMs") or None for b in batches],
        "upstream watermark": [b.get("upstreamWatermarkMs") for b in batches],
    }
    watermarks = {k: v for k, v in watermarks.items() if any(x is not None for x in v)}
    rows = (
        "".join(f'<tr class="event-row {cls}"><td>{_esc(b)}</td><td>{_esc(label)}</td></tr>' for b, cls, label in marks)
        or '<tr><td colspan="2">none</td></tr>'
    )
    return (
        f'<article class="source" data-source="{_esc(source)}">'
        f"<h1>Source {_esc(source)}: batches {min(ids)} to {max(ids)}</h1>"
        + _chart("Lag per partition (records behind the log end)", "lag", ids, lag, marks, "records")
        + _chart("Watermarks (own and upstream)", "watermark", ids, watermarks, marks, "event time (UTC)", _iso)
        + f'<h2>Events</h2><table class="events"><tr><th>batch</th><th>event</th></tr>{rows}</table></article>'
    )


def html(history: dict[str, Any], title: str | None = None) -> str:
    """The page for OpsMain's ``history`` answer (``{"store":..., "sources": {"0": [batch, ...]}}``)."""
    body = "".join(_source(s, bs) for s, bs in sorted(history["sources"].items()) if bs)
    if not body:
        body = '<p class="empty">The progress history is empty: the query has not completed a batch.</p>'
    name = _esc(title or history.get("store", ""))
    style = (
        "body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:18px}"
        "h2{font-size:15px;margin:18px 0 6px}"
        ".tick{font-size:11px;fill:#555}.axis{font-size:12px;fill:#333}"
        ".event{stroke-width:1.5;stroke-dasharray:4 3}.event.eos{stroke:#000}.event.startpoint{stroke:#d62728}"
        ".legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:14px}"
        ".legend span{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}"
        "table.events{border-collapse:collapse}table.events td,table.events th{border:1px solid #ddd;padding:2px 8px}"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>streamctl report: {name}</title>'
        f"<style>{style}</style></head><body><header><p>streamctl report for <code>{name}</code> "
        '(dashed lines: <b>black</b> end-of-stream, <b style="color:#d62728">red</b> startpoint applied)</p></header>'
        f"{body}</body></html>"
    )
