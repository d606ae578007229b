"""The run report as one self-contained HTML page.

Owns `render_html`. The page draws an `Explanation` as a timeline with three lanes (harness,
model, tools); each tool call links to the result that answers it (a click opens and highlights
the result), every entry expands to its raw JSON, a bar chart shows the tokens of each turn, and,
for a run log, a time axis places each model call and tool call by its timestamps. Images show
as small thumbnails and documents as links (`toolwire.explain.thumbs`).
No external resource is loaded: styles, script, chart and thumbnails are inline.
"""

from __future__ import annotations

import html
import json

from toolwire.explain.build import Explanation, usage_line
from toolwire.explain.thumbs import media_html

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232b;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}.meta{color:#566;margin-bottom:16px}
.lanes{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:6px 12px}
.lane-head{font-weight:600;text-transform:uppercase;font-size:12px;color:#566;
 border-bottom:2px solid #ccd;padding-bottom:4px}
.entry{border:1px solid #d6dbe1;border-radius:6px;background:#fff;padding:6px 8px}
.entry.harness{grid-column:1}.entry.model{grid-column:2}.entry.tools{grid-column:3}
.entry.error{border-color:#d33;background:#fff5f5}
.entry.highlight{outline:3px solid #f5a623}
.label{font-weight:600}.idx{color:#889;font-size:12px;margin-right:6px}
.summary{white-space:pre-wrap;word-break:break-word}
a.call{color:#0757c7;cursor:pointer;text-decoration:underline}
details pre{max-height:320px;overflow:auto;background:#f3f5f7;padding:6px;font-size:12px;
 white-space:pre-wrap;word-break:break-all}
.stop{margin:18px 0;padding:8px;border-left:4px solid #0757c7;background:#eef4fd}
svg text{font-size:11px;fill:#334}
.media-list{display:flex;flex-wrap:wrap;gap:6px;margin-top:4px}
figure.media{margin:0;font-size:11px;color:#566}img.thumb{display:block;border:1px solid #ccd}
"""

_JS = """
document.querySelectorAll('a.call').forEach(function(link){
  link.addEventListener('click', function(ev){
    ev.preventDefault();
    var target = document.getElementById(link.dataset.target);
    if(!target){return;}
    document.querySelectorAll('.highlight').forEach(function(e){e.classList.remove('highlight');});
    target.classList.add('highlight');
    target.querySelectorAll('details').forEach(function(d){d.open = true;});
    target.hidden = false;
    target.scrollIntoView({block: 'center'});
  });
});
"""


def _id(prefix: str, value: str) -> str:
    return prefix + "".join(c if c.isalnum() else f"_{ord(c):x}" for c in value)


def _chart(expl: Explanation) -> str:
    usage = expl.turn_usage
    if not usage:
        return "<p>No token usage was recorded.</p>"
    top = max(max(u.input_tokens, u.output_tokens) for u in usage) or 1
    bar, gap, height = 14, 10, 160
    width = len(usage) * (2 * bar + gap) + 40
    parts = [f'<svg id="usage-chart" width="{width}" height="{height + 40}" role="img" '
             f'aria-label="tokens per turn">']
    for n, u in enumerate(usage):
        x = 30 + n * (2 * bar + gap)
        for k, (value, colour) in enumerate(((u.input_tokens, "#7aa6e8"),
                                             (u.output_tokens, "#f0a35e"))):
            h = round(height * value / top)
            parts.append(f'<rect x="{x + k * bar}" y="{height - h + 10}" width="{bar - 2}" '
                         f'height="{h}" fill="{colour}"><title>turn {n + 1}: '
                         f'{"input" if k == 0 else "output"} {value}</title></rect>')
        parts.append(f'<text x="{x}" y="{height + 25}">{n + 1}</text>')
    parts.append('</svg>')  # the legend as text beside it: an SVG would clip it when narrow
    parts.append(f'<p class="legend">by turn: blue, input tokens; orange, output tokens; the '
                 f'highest is {top}</p>')
    return "".join(parts)


def _time_axis(expl: Explanation) -> str:
    """The model calls and tool calls of a run log on one time axis, one row per call: a tool
    started early overlaps the model call whose reply was still streaming."""
    spans = sorted(expl.spans, key=lambda sp: (sp.start, sp.lane != "model"))
    if not spans:
        return "<p>No timestamps were recorded.</p>"
    t0 = spans[0].start
    total = max(sp.end for sp in spans) - t0 or 1e-3
    width, row, left = 720, 18, 150
    parts = [f'<svg id="time-axis" width="{left + width + 20}" height="{row * len(spans) + 30}" '
             'role="img" aria-label="when each model call and tool ran">']
    for n, sp in enumerate(spans):
        start, end = sp.start - t0, sp.end - t0
        x = left + round(width * start / total, 1)
        w = max(round(width * (end - start) / total, 1), 1.0)
        colour = "#7aa6e8" if sp.lane == "model" else ("#4caf7a" if sp.early else "#f0a35e")
        what = f"{sp.label} (turn {sp.turn}{', started early' if sp.early else ''})"
        y = 4 + n * row
        parts.append(f'<text x="0" y="{y + 12}">{html.escape(_short_label(what))}</text>'
                     f'<rect class="span {sp.lane}" x="{x}" y="{y}" width="{w}" '
                     f'height="{row - 4}" fill="{colour}" data-start="{start:.3f}" '
                     f'data-end="{end:.3f}"><title>{html.escape(what)}: {start:.3f} s to '
                     f'{end:.3f} s</title></rect>')
    parts.append(f'<text x="{left}" y="{row * len(spans) + 24}">0 s to {total:.3f} s (blue: '
                 'model call, orange: tool, green: tool started while its reply streamed)'
                 '</text></svg>')
    return "".join(parts)


def _short_label(text: str, limit: int = 22) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _turns(expl: Explanation) -> str:
    """Each turn's tokens, cache hits and cost, and the run's, as a list."""
    if not expl.turn_usage:
        return ""
    rows = "".join(f"<li>turn {n}: {html.escape(usage_line(u))}</li>"
                   for n, u in enumerate(expl.turn_usage, 1))
    return (f'<ul id="turn-usage">{rows}<li><b>run: {html.escape(usage_line(expl.usage))}'
            "</b></li></ul>")


def render_html(expl: Explanation, title: str = "toolwire run report") -> str:
    """A single self-contained HTML page of the explanation."""
    esc = html.escape
    rows = ['<div class="lanes"><div class="lane-head">harness</div>'
            '<div class="lane-head">model</div><div class="lane-head">tools</div>']
    for n, e in enumerate(expl.entries):
        attrs = f'id="entry-{n}"'
        if e.call_id:
            attrs = f'id="{_id("call-", e.call_id)}"'
        elif e.answers:
            attrs = f'id="{_id("result-", e.answers)}"'
        classes = f"entry {e.lane}" + (" error" if e.is_error else "")
        summary = esc(e.summary)
        if e.call_id:
            summary += (f' <a class="call" data-target="{_id("result-", e.call_id)}" '
                        f'href="#">show result</a>')
        if e.answers:
            summary += (f' <a class="call" data-target="{_id("call-", e.answers)}" '
                        f'href="#">show call</a>')
        index = f'<span class="idx">#{e.index}</span>' if e.index is not None else ""
        raw = esc(json.dumps(e.raw, indent=2, ensure_ascii=False))
        rows.append(f'<div class="{classes}" {attrs}>{index}<span class="label">'
                    f'{esc(e.label)}</span><div class="summary">{summary}</div>'
                    f"{media_html(e.media, expl.media_folder)}"
                    f"<details><summary>raw JSON</summary><pre>{raw}</pre></details></div>")
    rows.append("</div>")
    stop = (f'<div class="stop" id="stop"><b>What ended the loop:</b> {esc(expl.stop or "-")}'
            f" — {esc(expl.stop_meaning)}</div>")
    notes = "".join(f"<li>{esc(n)}</li>" for n in expl.notes)
    models = "".join(f"<li>{esc(line)}</li>" for line in expl.models)
    total = expl.usage
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{esc(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>"
        f'<div class="meta">{esc(expl.source)}{" · " + esc(expl.wire) if expl.wire else ""}'
        f" · {len(expl.entries)} entries · {total.input_tokens} input / "
        f"{total.output_tokens} output tokens</div>"
        + "".join(rows) + stop
        + f"<h2>Tokens per turn</h2>{_chart(expl)}{_turns(expl)}"
        + (f"<h2>Time</h2>{_time_axis(expl)}" if expl.spans else "")
        + (f'<h2>Models</h2><ul id="models">{models}</ul>' if models else "")
        + (f"<ul>{notes}</ul>" if notes else "")
        + f"<script>{_JS}</script></body></html>"
    )
