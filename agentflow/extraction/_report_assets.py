"""The review page's inline stylesheet and script (no network assets).

The script only toggles classes: filtering documents by status (``all``,
``ok``, ``review``: ``ok`` records that need review, ``failed``, ``suspect``:
the CSS hides the other cards) or id, hiding
the span labels, and lighting up a field's highlights while its row is hovered.
It does no offset arithmetic (offsets are Python code-point indices, resolved
in Python when the page is built), and no record data is embedded in it.
"""

from __future__ import annotations

__all__ = ["PALETTE_SIZE", "SCRIPT", "STYLE"]

PALETTE_SIZE = 12
"""Highlight colours ``c0`` .. ``c11``, one per field (list indices ignored)."""

_COLOURS = (
    "#ffe08a", "#a8e6a1", "#9fd3ff", "#ffb3c7", "#d4b8ff", "#ffc98f",
    "#8ff0dc", "#e6e6a1", "#c2d1ff", "#f5b0f0", "#b8e0c8", "#f0c0a0",
)

STYLE = """
:root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #d0d7de; --muted: #57606a;
  --review: #bc4c00; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: #1f2328; background: #f6f8fa; }
header.top { background: #24292f; color: #fff; padding: 12px 20px; }
header.top h1 { margin: 0; font-size: 18px; font-weight: 600; }
header.top p { margin: 2px 0 0; color: #d0d7de; font-size: 12px; }
main { display: flex; flex-direction: column; gap: 16px; padding: 16px 20px; }
#summary { order: 0; } #checks { order: 1; } #failures { order: 2; } #docs { order: 3; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; }
.panel h2 { font-size: 15px; margin: 0 0 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 6px 14px; min-width: 110px; }
.card b { display: block; font-size: 22px; }
.card.ok b { color: var(--ok); } .card.failed b { color: var(--bad); }
.card.suspect b { color: var(--warn); }
table { border-collapse: collapse; }
th, td { text-align: left; vertical-align: top; padding: 3px 8px;
  border-bottom: 1px solid #eaeef2; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
.notes { margin: 8px 0 0; padding-left: 18px; color: var(--warn); }
.controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 10px; }
.controls button { border: 1px solid var(--line); background: #fff; border-radius: 6px;
  padding: 3px 10px; cursor: pointer; font: inherit; }
.controls button.on { background: #24292f; color: #fff; }
.controls input[type=search] { border: 1px solid var(--line); border-radius: 6px; padding: 3px 8px;
  min-width: 260px; font: inherit; }
#docs { display: flex; flex-direction: column; gap: 14px; }
article.doc { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--ok);
  border-radius: 6px; padding: 10px 14px; content-visibility: auto;
  contain-intrinsic-size: auto 400px; }
article.doc.is-failed { border-left-color: var(--bad); }
article.doc.is-suspect { border-left-color: var(--warn); }
article.doc.needs-review { border-left-color: var(--review); }
article.doc h3 { margin: 0; font-size: 14px; font-weight: 600; overflow-wrap: anywhere; }
.doc-meta { margin: 2px 0 8px; color: var(--muted); font-size: 12px; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 0 6px;
  border-radius: 10px; color: #fff; background: var(--ok); vertical-align: 1px; }
.badge.failed { background: var(--bad); } .badge.suspect { background: var(--warn); }
.badge.review { background: var(--review); }
.controls button .n { font-weight: 600; }
.error { border: 1px solid #ffcecb; background: #ffebe9; border-radius: 6px; padding: 6px 10px;
  margin-bottom: 8px; overflow-wrap: anywhere; }
.error .reason { white-space: pre-wrap; }
.error details { color: var(--muted); white-space: pre-wrap; font-size: 12px; }
.doc-body { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 14px; }
@media (max-width: 900px) { .doc-body { grid-template-columns: minmax(0, 1fr); } }
pre.source-text { margin: 0; padding: 8px 10px; background: #fbfcfd; border: 1px solid #eaeef2;
  border-radius: 6px; font: 12.5px/1.75 ui-monospace, "DejaVu Sans Mono", monospace;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 75vh; overflow: auto; }
.source-missing { color: var(--bad); font-style: italic; margin: 0; }
.source-note { color: var(--muted); font-size: 12px; margin: 4px 0 0; }
mark.hl { color: inherit; border-radius: 2px; padding: 1px 0; }
mark.hl mark.hl { box-shadow: inset 0 -2px 0 rgba(0, 0, 0, .45); }
mark.hl.first::before { content: attr(data-field); font: 600 10px/1 system-ui, sans-serif;
  color: #fff; background: rgba(36, 41, 47, .78); border-radius: 3px; padding: 1px 3px;
  margin-right: 2px; vertical-align: 2px; white-space: nowrap; }
body.nolabels mark.hl.first::before { display: none; }
mark.hl.differs { outline: 2px dashed var(--bad); }
mark.hl.lit, mark.hl:target { outline: 2px solid #24292f; }
span.missing { background: repeating-linear-gradient(45deg, #fff, #fff 4px, #eee 4px, #eee 8px);
  color: var(--muted); }
table.fields { width: 100%; font-size: 13px; }
table.fields td.path { font-family: ui-monospace, monospace; white-space: nowrap; }
table.fields td.val { white-space: pre-wrap; overflow-wrap: anywhere; }
table.fields tr.flagged td { background: #fff1e5; }
table.fields tr.flagged td.path { box-shadow: inset 3px 0 0 var(--review); }
table.fields td.conf { font-size: 12px; min-width: 9em; }
table.fields .why { color: var(--muted); font-size: 11px; }
.score { font-family: ui-monospace, monospace; }
.score.low { color: var(--bad); font-weight: 600; }
.tag { font-size: 11px; border-radius: 3px; padding: 0 4px; white-space: nowrap; }
.tag.nodoc { background: var(--bad); color: #fff; font-weight: 600; }
.tag.nospan { border: 1px solid var(--line); color: var(--muted); }
tr.nodoc .v { text-decoration: underline wavy var(--bad); text-decoration-skip-ink: none; }
table.fields tr.lit td { background: #fff8c5; }
.sw { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px;
  vertical-align: -1px; border: 1px solid rgba(0, 0, 0, .2); }
.null { color: var(--muted); font-style: italic; }
.warn { color: var(--bad); font-size: 12px; }
a.span-link { font-family: ui-monospace, monospace; font-size: 12px; white-space: nowrap; }
body[data-filter=ok] article.doc:not(.is-ok),
body[data-filter=failed] article.doc:not(.is-failed),
body[data-filter=suspect] article.doc:not(.is-suspect),
body[data-filter=review] article.doc:not(.needs-review),
article.doc.hidden { display: none; }
""" + "".join(
    f".c{i}{{background:{colour}}}\n" for i, colour in enumerate(_COLOURS)
)

SCRIPT = """
(function () {
  var body = document.body;
  var buttons = document.querySelectorAll('.controls button[data-filter]');
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      body.setAttribute('data-filter', b.getAttribute('data-filter'));
      buttons.forEach(function (o) { o.classList.toggle('on', o === b); });
    });
  });
  var labels = document.getElementById('labels');
  if (labels) labels.addEventListener('change', function () {
    body.classList.toggle('nolabels', !labels.checked);
  });
  var search = document.getElementById('search');
  if (search) search.addEventListener('input', function () {
    var q = search.value.toLowerCase();
    document.querySelectorAll('article.doc').forEach(function (a) {
      a.classList.toggle('hidden', q !== '' &&
        (a.getAttribute('data-id') || '').toLowerCase().indexOf(q) < 0);
    });
  });
  function light(row, on) {
    var doc = row.closest('article.doc');
    var field = row.getAttribute('data-field');
    row.classList.toggle('lit', on);
    doc.querySelectorAll('mark.hl').forEach(function (m) {
      if (m.getAttribute('data-field') === field) m.classList.toggle('lit', on);
    });
  }
  document.querySelectorAll('table.fields tr[data-field]').forEach(function (row) {
    row.addEventListener('mouseenter', function () { light(row, true); });
    row.addEventListener('mouseleave', function () { light(row, false); });
  });
})();
"""
