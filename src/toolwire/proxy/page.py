"""The page that shows a proxy's conversations as they happen: ``/_toolwire/``.

Owns `page_answer` (the answers under `PAGE`: the page, its data and each conversation's
report) and `conversations` (the rows, read from the record folder). Everything comes from
``--record``'s folder, the one state the worker processes share: its ``proxy.jsonl`` (a line
per request, with the status, the rules a request broke, the losses and the times) and each
conversation's cassette, read by `toolwire.explain` (tokens, the cache's share, the cost at the
upstream's prices) and shown as its HTML report. A cassette's figures are kept until the file
changes. Without a record folder the page says how to get one.

Must not import: the server (uvicorn, `toolwire.proxy.asgi`).
"""

from __future__ import annotations

import html
import json
import statistics
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolwire import _json
from toolwire.errors import ToolwireError
from toolwire.proxy.answers import JSON_TYPE, Answer
from toolwire.proxy.record import LOG_NAME
from toolwire.transcript import Usage

PAGE = "/_toolwire/"
HTML_TYPE = "text/html; charset=utf-8"


class Figures:
    """Each cassette's usage, priced, kept while the file is unchanged."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[tuple[int, int], Usage | None]] = {}
        self._lock = threading.Lock()

    def usage(self, path: Path, priced_as: tuple[str, str] | None) -> Usage | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            kept = self._kept.get(path)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        found = _usage_of(path, priced_as)
        with self._lock:
            self._kept[path] = (stamp, found)
        return found


def _usage_of(path: Path, priced_as: tuple[str, str] | None) -> Usage | None:
    from toolwire.context.prices import with_cost
    from toolwire.explain.build import explain_file

    try:
        turns = explain_file(path).turn_usage
    except (ToolwireError, ValueError, KeyError, TypeError, OSError):
        return None  # a cassette being written, or one that is not whole: no figures yet
    total = Usage()
    for turn in turns:
        if priced_as is not None and turn.cost is None:
            provider, model = priced_as
            turn = with_cost(turn, model, provider)
        total = total + turn
    return total


def _lines(folder: Path) -> list[dict[str, Any]]:
    try:
        text = (folder / LOG_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line being written by another worker
        if isinstance(entry, dict) and isinstance(entry.get("conversation"), str):
            found.append(entry)
    return found


def conversations(folder: Path, figures: Figures) -> list[dict[str, Any]]:
    """One row per conversation of the record folder, the latest first."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for entry in _lines(folder):
        grouped.setdefault(entry["conversation"], []).append(entry)
    rows = []
    for key, entries in grouped.items():
        last = entries[-1]
        firsts = [e["first_ms"] if "first_ms" in e else e.get("ms") for e in entries]
        timed = [t for t in firsts if isinstance(t, int | float)]
        priced = last.get("priced_as")
        usage = None
        cassette = _cassette(folder, key)
        if cassette is not None:
            usage = figures.usage(cassette, tuple(priced) if isinstance(priced, list)
                                  and len(priced) == 2 else None)
        losses: list[str] = []
        for e in entries:
            for loss in str(e.get("losses") or "").split("; "):
                if loss and loss not in losses:
                    losses.append(loss)
        rows.append({
            "key": key, "client": last.get("client"), "upstream": last.get("upstream"),
            "model": last.get("model"), "turns": len(entries), "last_status": last.get("status"),
            "first_seen": entries[0].get("t"), "last_seen": last.get("t"),
            "input_tokens": usage.input_tokens if usage else None,
            "output_tokens": usage.output_tokens if usage else None,
            "cache_read_tokens": usage.cache_read_tokens if usage else None,
            "cost": usage.cost if usage else None,
            "first_token_ms": round(statistics.median(timed), 1) if timed else None,
            "violations": sum(len(e.get("problems") or ()) for e in entries),
            "problems": [p for e in entries for p in e.get("problems") or ()][-5:],
            "losses": losses,
            "broke": [e["broke"] for e in entries if e.get("broke")][-3:],
            "report": cassette is not None,
        })
    rows.sort(key=lambda r: r["last_seen"] or 0, reverse=True)
    return rows


def _cassette(folder: Path, key: str) -> Path | None:
    """The newest cassette of the conversation ``key`` (a restarted proxy writes ``-2``...)."""
    found = [p for p in folder.glob(f"{key}*.json")
             if p.stem == key or p.stem.removeprefix(key + "-").isdigit()]
    return max(found, key=lambda p: p.stat().st_mtime_ns) if found else None


def page_answer(path: str, query: Mapping[str, str], folder: str | None,
                figures: Figures) -> Answer | None:
    """The answer at ``path`` under `PAGE`, or None when ``path`` is not the page's. ``query``
    keeps ``key`` (the proxy's key, for the page's own links when it needs one)."""
    if not path.startswith(PAGE.rstrip("/")):
        return None
    rest = path[len(PAGE):] if path.startswith(PAGE) else ""
    suffix = f"?key={html.escape(query['key'])}" if query.get("key") else ""
    if folder is None:
        return 200, {"content-type": HTML_TYPE}, _frame(
            "<p id=norecord>This proxy keeps no record, so there is nothing to show. Start it "
            "with <code>--record DIR</code> to see each conversation here.</p>")
    where = Path(folder)
    if rest == "":
        return 200, {"content-type": HTML_TYPE}, _frame(_TABLE.replace("SUFFIX", suffix))
    if rest == "conversations.json":
        return 200, {"content-type": JSON_TYPE}, _json.dumps(conversations(where, figures))
    if rest.startswith("c/"):
        key = rest[2:]
        cassette = _cassette(where, key) if key.isalnum() else None
        if cassette is None:
            return 404, {"content-type": HTML_TYPE}, _frame(
                f"<p>No conversation {html.escape(key)} is recorded here.</p>")
        from toolwire.explain.build import explain_file
        from toolwire.explain.html import render_html

        try:
            report = render_html(explain_file(cassette), title=f"conversation {key}")
        except (ToolwireError, ValueError, KeyError, TypeError) as exc:
            return 503, {"content-type": HTML_TYPE}, _frame(
                f"<p>The conversation {html.escape(key)} cannot be shown yet "
                f"({html.escape(str(exc))}); try again in a moment.</p>")
        return 200, {"content-type": HTML_TYPE}, report.encode()
    return 404, {"content-type": HTML_TYPE}, _frame(
        f"<p>Nothing is served at {html.escape(path)}; the page is at "
        f'<a href="{PAGE}{suffix}">{PAGE}</a>.</p>')


def _frame(body: str) -> bytes:
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<title>toolwire proxy</title><style>" + _CSS + "</style></head><body>"
            "<h1>toolwire proxy: conversations</h1>" + body + "</body></html>").encode()


_CSS = """body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;
width:100%}th,td{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:
tabular-nums}.bad{color:#a00}.small{font-size:12px;color:#555}"""

_TABLE = """<p class=small>Every conversation through this proxy, newest first, refreshed every
two seconds. Open one to see its report.</p>
<table id=conversations><thead><tr><th>conversation</th><th>client</th><th>upstream</th>
<th>turns</th><th>tokens in / out</th><th>cache read</th><th>cost</th>
<th>first token (median)</th><th>rules broken</th><th>losses</th><th>status</th></tr>
</thead><tbody></tbody></table>
<script>
const suffix = "SUFFIX";
function cell(text, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  td.textContent = text;
  return td;
}
async function refresh() {
  let rows;
  try {
    rows = await (await fetch("conversations.json" + suffix)).json();
  } catch (e) { return; }
  const body = document.querySelector("#conversations tbody");
  body.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.id = "c-" + r.key;
    const first = document.createElement("td");
    if (r.report) {
      const a = document.createElement("a");
      a.href = "c/" + r.key + suffix;
      a.textContent = r.key;
      first.appendChild(a);
    } else first.textContent = r.key;
    tr.appendChild(first);
    tr.appendChild(cell(r.client));
    tr.appendChild(cell(r.upstream + " · " + r.model));
    tr.appendChild(cell(r.turns, "n"));
    tr.appendChild(cell(r.input_tokens === null ? "-" :
                        r.input_tokens + " / " + r.output_tokens, "n"));
    tr.appendChild(cell(r.cache_read_tokens === null ? "-" : r.cache_read_tokens, "n"));
    tr.appendChild(cell(r.cost === null ? "unknown" : "$" + r.cost.toFixed(4), "n"));
    tr.appendChild(cell(r.first_token_ms === null ? "-" : r.first_token_ms + " ms", "n"));
    tr.appendChild(cell(r.violations ? r.violations + ": " + r.problems.join("; ") : "0",
                        r.violations ? "bad" : ""));
    tr.appendChild(cell(r.losses.join("; ") || "none"));
    tr.appendChild(cell(r.last_status + (r.broke.length ? " (broke: " + r.broke.join("; ")
                        + ")" : ""), r.last_status >= 400 || r.broke.length ? "bad" : ""));
    body.appendChild(tr);
  }
  document.body.dataset.loaded = String(rows.length);
}
refresh();
setInterval(refresh, 2000);
</script>"""

__all__ = ["PAGE", "Figures", "conversations", "page_answer"]
