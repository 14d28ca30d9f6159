/** The page's inline stylesheet and script: no external file, font or library. */

export const REPORT_CSS = `
:root { color-scheme: light; --fg: #1b1b1b; --muted: #5a5a5a; --line: #d0d0d0; --warn: #b2182b; --bg-warn: rgba(178, 24, 43, 0.08); }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 1rem 1.5rem 4rem; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.3rem; margin-top: 2.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.5rem; font-family: ui-monospace, monospace; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.3rem 1.2rem; padding: 0; list-style: none; }
.badge { font-size: 0.8rem; background: #e69f00; color: #000; border-radius: 3px; padding: 0.1rem 0.4rem; vertical-align: middle; }
.notice { border-left: 4px solid #e69f00; background: #fff6e0; padding: 0.5rem 0.8rem; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 0.3rem 1.5rem; }
.facts div { display: flex; justify-content: space-between; gap: 0.8rem; border-bottom: 1px dotted var(--line); }
.facts dt { color: var(--muted); } .facts dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
.empty { color: var(--muted); font-style: italic; }
figure { margin: 1rem 0 1.5rem; } figcaption { color: var(--muted); font-size: 0.9rem; }
svg.chart { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; display: block; }
svg .axis, svg .frame { stroke: #888; fill: none; } svg .grid { stroke: #eee; } svg .ref { stroke: #888; stroke-dasharray: 3 3; }
svg .ref0 { stroke: #aaa; } svg .tick, svg .legend { fill: var(--muted); } svg .axis-label { fill: var(--fg); }
svg .group { font-weight: 600; fill: var(--fg); } svg .row-label.warn { fill: var(--warn); font-weight: 600; }
svg .warn-band { fill: var(--bg-warn); } svg .quadrant { fill: var(--bg-warn); }
svg .pt { fill: #0072b2; opacity: 0.8; } svg .pt-hi { fill: var(--warn); }
svg .m-sep { stroke: #fff; stroke-width: 2; } svg .m-label { fill: var(--fg); }
.matrices { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr)); gap: 1rem; }
h1, h2, h3, dd, figcaption, summary, p, li { overflow-wrap: anywhere; }
h2 .cite { font-size: 0.8rem; font-weight: normal; color: var(--muted); }
.table-wrap { max-width: 100%; overflow-x: auto; }
.csv-link { margin: 0 0 1rem; font-size: 0.85rem; color: var(--muted); }
@media (max-width: 600px) { body { padding: 0.5rem 0.75rem 3rem; font-size: 14px; } .facts { grid-template-columns: 1fr; } }
.m-caption { margin: 0.2rem 0 0; color: var(--muted); font-size: 0.85rem; }
.row-of-charts { display: flex; flex-wrap: wrap; gap: 1rem; }
details { margin: 0.4rem 0; } summary { cursor: pointer; color: #0b5cad; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.85rem; }
caption { text-align: left; color: var(--muted); padding: 0.2rem 0; }
th, td { border-bottom: 1px solid #eee; padding: 0.15rem 0.6rem; text-align: left; }
th { cursor: pointer; user-select: none; background: #f6f6f6; position: sticky; top: 0; }
th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; }
@media print { details { display: block; } summary { display: none; } }
`;

/** Click a column header to sort a table (numbers as numbers, "–" last). */
export const REPORT_JS = `
(function () {
  function key(td, numeric) {
    var t = td ? td.textContent : '';
    if (!numeric) return t;
    var v = parseFloat(t.replace('\\u2212', '-').replace(/[^0-9eE.+-]/g, ''));
    return isNaN(v) ? Infinity : v;
  }
  document.querySelectorAll('table.sortable th').forEach(function (th) {
    th.tabIndex = 0;
    function sort() {
      var table = th.closest('table');
      var body = table.tBodies[0];
      var col = th.cellIndex;
      var numeric = th.classList.contains('num');
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      table.querySelectorAll('th').forEach(function (o) { o.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
        var c = x < y ? -1 : x > y ? 1 : 0;
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
  });
})();
`;
