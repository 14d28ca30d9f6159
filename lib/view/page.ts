/**
 * The viewer's one page: a shell the script (viewer.js, beside this file) fills from the JSON API.
 * No framework, no bundler, nothing loaded from elsewhere (the server's CSP allows its own script only).
 */

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fafafa}
header{background:#1b1f24;color:#fff;padding:.6em 1em;display:flex;gap:1em;align-items:baseline;flex-wrap:wrap}
header a{color:#fff}
main{padding:1em;max-width:1400px}
nav.crumbs{margin-bottom:.8em}
table{border-collapse:collapse;background:#fff;margin:.4em 0 1em}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f3f6;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.cell{cursor:pointer;color:#0550ae}
td.cell:hover{background:#ddf4ff}
.wrap{overflow-x:auto}
.bar{display:inline-block;height:.7em;background:#2da44e;vertical-align:middle}
.barbox{display:inline-block;width:8em;background:#eaeef2;margin-right:.4em}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;background:#eaeef2;margin-right:.3em}
.badge.run{background:#fff8c5}
.err{color:#cf222e}
form.filters{display:flex;flex-wrap:wrap;gap:.5em;align-items:end;background:#fff;padding:.5em;border:1px solid #d0d7de}
form.filters label{display:flex;flex-direction:column;font-size:12px}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #d0d7de;padding:.5em;margin:.3em 0}
tr.reply{cursor:pointer}
tr.reply:hover{background:#ddf4ff}
.muted{color:#57606a}
`;

/** The HTML of the page; `title` is escaped. */
export function pageHtml(title: string): string {
  const esc = title.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc}</title><link rel="icon" href="data:,"><style>${STYLE}</style></head>
<body><header><strong><a href="#/">sondage view</a></strong><span id="where" class="muted"></span></header>
<main id="app">Loading…</main>
<script src="/viewer.js"></script></body></html>
`;
}
