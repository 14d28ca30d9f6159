/* The page script of `sondage view`, served as-is (no bundler). Routes live in the hash:
 *   #/                         the campaigns of the data folder
 *   #/c/<campaign>             progress, spend, throughput, failures, result tables
 *   #/c/<campaign>/t/<table>   one result table; a cell opens its replies
 *   #/c/<campaign>/r?<query>   a page of replies, with filters and full-text search
 *   #/c/<campaign>/reply?…     one reply: prompt, attempts, every reading
 * Everything from the server is put into the page as text (textContent), never as HTML. */
/* global document, window, fetch, location, URLSearchParams, setTimeout, clearTimeout */
'use strict';

const app = document.getElementById('app');
let refreshTimer;
/** Bumped by each route: an answer that arrives for an earlier route (the overview's refresh still on
 * the wire when the reader clicks on) is dropped rather than drawn over the page asked for since. */
let generation = 0;
class Stale extends Error {}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'onclick' || k === 'onsubmit' || k === 'onchange') node[k] = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof window.Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function get(path, params) {
  const asked = generation;
  const qs = params ? `?${params.toString()}` : '';
  const res = await fetch(`/api/${path}${qs}`);
  const body = await res.json();
  if (asked !== generation) throw new Stale();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

const enc = encodeURIComponent;
const fmtUsd = (n) => `$${Number(n).toFixed(4)}`;
/** One call's cost: small amounts keep two significant digits ($0.000038), not $0.0000. */
const fmtCost = (n) => (n > 0 && n < 0.01 ? `$${Number(n).toPrecision(2)}` : fmtUsd(n));
const fmtInt = (n) => Number(n).toLocaleString('en-US');

function table(headers, rows, opts) {
  const o = opts || {};
  return el('div', { class: 'wrap' }, el('table', { id: o.id }, el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))), el('tbody', {}, rows)));
}

function crumbs(...parts) {
  const nav = el('nav', { class: 'crumbs' }, el('a', { href: '#/' }, 'campaigns'));
  for (const [label, href] of parts) nav.append(' / ', href ? el('a', { href }, label) : label);
  return nav;
}

function show(...nodes) {
  app.replaceChildren(...nodes);
}

// ---- campaigns ---------------------------------------------------------------------------------

async function campaigns() {
  const data = await get('campaigns');
  document.getElementById('where').textContent = data.description;
  if (data.campaigns.length === 0) return show(el('p', {}, 'This data folder holds no campaign yet.'));
  show(
    el('h1', {}, 'Campaigns'),
    table(
      ['campaign', 'battery', 'phases', 'result tables', 'state'],
      data.campaigns.map((c) =>
        el('tr', {}, el('td', {}, el('a', { href: `#/c/${enc(c.name)}`, class: 'campaign' }, c.name)), el('td', {}, c.battery || '?'), el('td', {}, c.phases.join(', ')), el('td', { class: 'num' }, c.tables.length), el('td', {}, c.running ? el('span', { class: 'badge run' }, 'running') : 'not running')),
      ),
      { id: 'campaigns' },
    ),
  );
}

// ---- one campaign ------------------------------------------------------------------------------

function progressBar(part, whole) {
  const share = whole > 0 ? Math.min(1, part / whole) : 0;
  return el('span', {}, el('span', { class: 'barbox' }, el('span', { class: 'bar', style: `width:${(share * 100).toFixed(1)}%` })), whole > 0 ? `${(share * 100).toFixed(1)}%` : '–');
}

async function overview(name) {
  const o = await get(`campaigns/${enc(name)}/overview`);
  const p = o.progress;
  const nodes = [crumbs([name]), el('h1', {}, name, ' ', el('span', { class: 'badge' }, o.campaign.battery || 'battery ?'), o.campaign.running ? el('span', { class: 'badge run' }, 'running') : null)];
  if (p) {
    nodes.push(el('p', { id: 'run' }, `run: ${p.run}`));
    nodes.push(
      el('h2', {}, 'Progress per phase'),
      table(
        ['phase', 'done', 'failed', 'in flight', 'pending', 'planned', 'progress'],
        p.phases.map((ph) => {
          const whole = ph.planned !== undefined ? ph.planned : ph.done + ph.failed + ph.inFlight + ph.pending;
          return el('tr', {}, el('td', {}, el('a', { href: `#/c/${enc(name)}/r?phase=${enc(ph.phase)}` }, ph.phase)), ...[ph.done, ph.failed, ph.inFlight, ph.pending].map((n) => el('td', { class: 'num' }, fmtInt(n))), el('td', { class: 'num' }, ph.planned === undefined ? '?' : `${ph.estimated ? '~' : ''}${fmtInt(ph.planned)}`), el('td', {}, progressBar(ph.done, whole)));
        }),
        { id: 'progress' },
      ),
    );
    const b = p.budget;
    nodes.push(el('p', { id: 'spend' }, b ? ['spend: ', fmtUsd(b.spent_usd), ' of ', fmtUsd(b.cap_usd), ' cap ', progressBar(b.spent_usd + b.possibly_billed_usd, b.cap_usd), ` · ${fmtUsd(b.reserved_usd)} reserved for calls in flight`] : 'spend: nothing recorded yet'));
    const kinds = Object.entries(o.failuresByKind);
    nodes.push(el('p', { id: 'failures' }, kinds.length === 0 ? 'failures: none' : [`failures: ${p.failuresTotal} — `, kinds.map(([k, n]) => el('span', { class: 'badge err' }, `${k}: ${n}`))]));
  } else {
    nodes.push(el('p', { class: 'muted' }, 'No ledger here: progress and spend are unknown; the stored replies follow.'));
  }
  const c = o.counts;
  nodes.push(el('p', { id: 'throughput' }, `throughput: ${c.recentPerMinute.toFixed(1)} replies/min over the last 5 minutes; ${c.overallPerMinute.toFixed(1)} replies/min from the first reply (${c.firstAt || '–'}) to the last (${c.lastAt || '–'})`));
  nodes.push(el('h2', {}, 'Result tables'));
  nodes.push(o.campaign.tables.length === 0 ? el('p', { class: 'muted' }, 'No result table yet (`sondage analyze` writes them).') : el('ul', { id: 'tables' }, o.campaign.tables.map((t) => el('li', {}, el('a', { href: `#/c/${enc(name)}/t/${enc(t)}` }, t)))));
  nodes.push(el('h2', {}, 'Replies'), el('p', {}, el('a', { href: `#/c/${enc(name)}/r`, id: 'all-replies' }, 'all replies')));
  nodes.push(
    table(
      ['phase', 'model', 'language', 'replies', 'ok', 'cost'],
      c.rows.map((r) => el('tr', {}, el('td', {}, r.phase), el('td', {}, r.model), el('td', {}, r.language), el('td', { class: 'num' }, el('a', { href: `#/c/${enc(name)}/r?${new URLSearchParams({ phase: r.phase, model: r.model, language: r.language })}` }, fmtInt(r.replies))), el('td', { class: 'num' }, fmtInt(r.ok)), el('td', { class: 'num' }, fmtUsd(r.costUsd)))),
      { id: 'counts' },
    ),
  );
  show(...nodes);
  // A running campaign is followed live.
  if (o.campaign.running) refreshTimer = setTimeout(() => route(), 3000);
}

// ---- a result table ----------------------------------------------------------------------------

async function resultTable(name, tableName) {
  const t = await get(`campaigns/${enc(name)}/tables/${enc(tableName)}`);
  const numeric = t.columns.map((_, i) => t.rows.length > 0 && t.rows.every((r) => r[i] === '' || !Number.isNaN(Number(r[i]))));
  const status = el('p', { id: 'cell-status', class: 'muted' }, 'Click a cell to see the replies behind it.');
  async function open(row, column) {
    const { selection } = await get(`campaigns/${enc(name)}/cell`, new URLSearchParams({ table: tableName, row: String(row), column }));
    if (!selection) {
      status.textContent = 'No reply stands behind this cell alone (it pools the campaign).';
      return;
    }
    location.hash = `#/c/${enc(name)}/r?${selectionParams(selection)}`;
  }
  show(
    crumbs([name, `#/c/${enc(name)}`], [tableName]),
    el('h1', {}, tableName),
    status,
    t.truncated > 0 ? el('p', { class: 'muted' }, `${fmtInt(t.truncated)} more rows are not shown.`) : null,
    table(
      t.columns,
      t.rows.map((r, i) => el('tr', {}, r.map((v, j) => el('td', { class: `cell${numeric[j] ? ' num' : ''}`, 'data-row': i, 'data-column': t.columns[j], onclick: () => open(i, t.columns[j]).catch(fail) }, v)))),
      { id: 'result' },
    ),
  );
}

function selectionParams(s) {
  const q = new URLSearchParams();
  for (const ph of s.phases || []) q.append('phase', ph);
  for (const k of ['model', 'language', 'reader', 'label']) if (s[k]) q.set(k, s[k]);
  if (s.disagree) q.set('disagree', '1');
  for (const [k, v] of Object.entries(s.factors || {})) q.set(`f.${k}`, v);
  return q.toString();
}

// ---- replies -----------------------------------------------------------------------------------

function select(name, values, current, label) {
  return el('label', {}, label, el('select', { name }, el('option', { value: '' }, 'any'), values.map((v) => el('option', { value: v, selected: v === current }, v))));
}

async function replies(name, params) {
  const [filters, page] = await Promise.all([get(`campaigns/${enc(name)}/filters`), get(`campaigns/${enc(name)}/replies`, params)]);
  const phases = params.getAll('phase');
  const form = el(
    'form',
    { class: 'filters', id: 'filters' },
    el('label', {}, 'phase', el('select', { name: 'phase', multiple: true, size: Math.min(4, filters.phases.length) }, filters.phases.map((v) => el('option', { value: v, selected: phases.includes(v) }, v)))),
    select('model', filters.models, params.get('model'), 'model'),
    select('language', filters.languages, params.get('language'), 'language'),
    select('reader', filters.readers, params.get('reader'), 'reader'),
    select('label', filters.labels, params.get('label'), 'label'),
    el('label', {}, 'readers disagree', el('input', { type: 'checkbox', name: 'disagree', checked: params.get('disagree') === '1' })),
    el('label', {}, 'search replies', el('input', { type: 'search', name: 'q', value: params.get('q') || '' })),
    [...params].filter(([k]) => k.startsWith('f.')).map(([k, v]) => el('label', {}, k.slice(2), el('input', { name: k, value: v }))),
    el('button', { type: 'submit' }, 'Filter'),
  );
  form.onsubmit = (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const o of form.querySelector('select[name=phase]').selectedOptions) q.append('phase', o.value);
    for (const k of ['model', 'language', 'reader', 'label', 'q']) {
      const v = form.querySelector(`[name=${k}]`).value;
      if (v) q.set(k, v);
    }
    if (form.querySelector('[name=disagree]').checked) q.set('disagree', '1');
    for (const input of form.querySelectorAll('input[name^="f."]')) if (input.value) q.set(input.name, input.value);
    location.hash = `#/c/${enc(name)}/r?${q}`;
  };
  const offset = page.offset;
  const pageTo = (to, cursor) => {
    const q = new URLSearchParams(params);
    q.set('offset', String(to));
    q.delete('cursor');
    if (cursor) q.set('cursor', cursor);
    return `#/c/${enc(name)}/r?${q}`;
  };
  const count = el('span', { id: 'count' }, 'counting…');
  // The links come before the count: the count arrives later and changes width, and a link after it
  // would move under a reader's pointer between aiming and clicking.
  show(
    crumbs([name, `#/c/${enc(name)}`], ['replies']),
    form,
    el(
      'p',
      { id: 'pager' },
      offset > 0 ? el('a', { href: pageTo(Math.max(0, offset - page.limit)), id: 'prev' }, '← previous') : null,
      ' ',
      page.more ? el('a', { href: pageTo(offset + page.limit, page.next), id: 'next' }, 'next →') : null,
      ` replies ${page.rows.length === 0 ? 0 : offset + 1}–${offset + page.rows.length} of `,
      count,
      ` (${page.ms.toFixed(0)} ms)`,
    ),
    table(
      ['phase', 'model', 'language', 'item', 'attempt', 'status', 'cost', 'readings', 'reply'],
      page.rows.map((r) => {
        const href = `#/c/${enc(name)}/reply?${new URLSearchParams({ phase: r.phase, item: r.item_id, model: r.model, language: r.language })}`;
        const tr = el('tr', { class: 'reply', 'data-item': r.item_id }, el('td', {}, r.phase), el('td', {}, r.model), el('td', {}, r.language), el('td', {}, el('a', { href }, r.item_id)), el('td', { class: 'num' }, r.attempt), el('td', { class: r.status === 'ok' ? '' : 'err' }, r.status, r.error_class ? ` (${r.error_class})` : ''), el('td', { class: 'num' }, fmtCost(r.cost_usd)), el('td', {}, r.readings), el('td', {}, r.text || ''));
        tr.onclick = () => (location.hash = href);
        return tr;
      }),
      { id: 'replies' },
    ),
  );
  get(`campaigns/${enc(name)}/count`, params).then((c) => (count.textContent = fmtInt(c.count)), () => (count.textContent = '?'));
}

async function reply(name, params) {
  const r = await get(`campaigns/${enc(name)}/reply`, params);
  show(
    crumbs([name, `#/c/${enc(name)}`], ['replies', `#/c/${enc(name)}/r?${new URLSearchParams({ phase: r.phase, model: r.model, language: r.language })}`], [r.item_id]),
    el('h1', { id: 'reply-title' }, `${r.phase} · ${r.model} · ${r.language}`),
    el('p', { class: 'muted' }, `item ${r.item_id}`, r.source_item_id ? [' · built from ', el('a', { href: `#/c/${enc(name)}/reply?${new URLSearchParams({ phase: '', item: r.source_item_id, model: r.model, language: r.language })}`, class: 'source' }, r.source_item_id)] : ''),
    el('h2', {}, 'Prompt'),
    el('div', { id: 'prompt' }, r.messages.map((m) => [el('strong', {}, m.role), el('pre', {}, typeof m.content === 'string' ? m.content : JSON.stringify(m.content, null, 1))])),
    el('details', {}, el('summary', {}, 'prompt columns'), table(['column', 'value'], Object.entries(r.prompt).map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, v === null ? '' : String(v)))))),
    el('h2', {}, 'Reply'),
    el('div', { id: 'attempts' }, r.attempts.map((a) => [
      el('p', {}, el('span', { class: `badge ${a.status === 'ok' ? '' : 'err'}` }, a.status), ` attempt ${a.attempt} · ${fmtCost(a.cost_usd)} · ${a.input_tokens}+${a.output_tokens} tokens · ${Math.round(a.latency_ms)} ms · ${a.provider}${a.simulated ? ' (SIMULATED)' : ''} · finish ${a.finish_reason || '–'} · ${a.created_at}`),
      a.text !== null ? el('pre', { class: 'reply-text' }, a.text) : null,
      a.error_class ? el('p', { class: 'err' }, `${a.error_class}: ${a.error_message || ''}`) : null,
      a.logprobs_json ? el('details', {}, el('summary', {}, 'logprobs'), el('pre', {}, a.logprobs_json)) : null,
    ])),
    el('h2', {}, 'Readings'),
    r.readings.length === 0 ? el('p', { class: 'muted' }, 'No reading.') : table(
      ['phase', 'reader', 'facet', 'label', 'value', 'raw'],
      r.readings.map((x) => el('tr', {}, el('td', {}, x.phase), el('td', {}, x.reader, x.judge_item_id && x.judge_item_id !== r.item_id ? [' ', el('a', { href: `#/c/${enc(name)}/reply?${new URLSearchParams({ phase: '', item: x.judge_item_id, model: r.model, language: r.language })}` }, '(its reply)')] : ''), el('td', {}, x.facet || ''), el('td', {}, x.label), el('td', { class: 'num' }, x.value === null ? '' : Number(x.value).toFixed(4)), el('td', {}, el('pre', {}, x.raw || '')))),
      { id: 'readings' },
    ),
  );
}

// ---- routing -----------------------------------------------------------------------------------

function fail(err) {
  app.replaceChildren(el('p', { class: 'err', id: 'error' }, String(err.message || err)), el('p', {}, el('a', { href: '#/' }, 'back to the campaigns')));
}

function route() {
  clearTimeout(refreshTimer);
  const mine = ++generation;
  const hash = location.hash.replace(/^#/, '') || '/';
  const [pathPart, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  let work;
  if (parts.length === 0) work = campaigns();
  else if (parts[0] === 'c' && parts.length === 2) work = overview(parts[1]);
  else if (parts[0] === 'c' && parts[2] === 't' && parts.length === 4) work = resultTable(parts[1], parts[3]);
  else if (parts[0] === 'c' && parts[2] === 'r') work = replies(parts[1], params);
  else if (parts[0] === 'c' && parts[2] === 'reply') work = reply(parts[1], params);
  else work = Promise.reject(new Error('no such page'));
  work.then(
    () => mine === generation && document.body.setAttribute('data-ready', hash),
    (err) => mine === generation && !(err instanceof Stale) && fail(err),
  );
}

window.addEventListener('hashchange', route);
route();
