"""The page's script (vanilla JS, inlined: no network, no library).

Data comes from ``<script id="swetrain-data">`` (gzip + base64, decompressed with the browser's
``DecompressionStream``; or plain JSON) or, under ``--serve``, from ``/api/data`` and
``/api/episode?key=...`` on the same loopback server.
"""

JS = r"""
'use strict';
const S = { data: null, filtered: [], sort: { col: null, dir: 1 }, current: null, cache: {}, colorBy: 'mask' };
const $ = (sel, root) => (root || document).querySelector(sel);
function esc(s) {
  if (s === null || s === undefined) return '';
  return String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
function fmt(v, d) {
  if (v === null || v === undefined || v === '') return '';
  if (typeof v === 'number') { if (!isFinite(v)) return String(v); return Number.isInteger(v) ? String(v) : v.toFixed(d === undefined ? 3 : d); }
  return String(v);
}
function note(text, bad) { return `<div class="note${bad ? ' bad' : ''}">${esc(text)}</div>`; }

async function loadData() {
  const el = document.getElementById('swetrain-data');
  if (!el) { const r = await fetch('/api/data'); if (!r.ok) throw new Error('server: ' + r.status); return r.json(); }
  const enc = el.dataset.encoding;
  if (enc === 'gzip-base64') {
    const bin = atob(el.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }
  return JSON.parse(el.textContent);
}

async function getEpisode(key) {
  if (S.cache[key]) return S.cache[key];
  let ep = S.data.episodes ? S.data.episodes[key] : null;
  if (!ep && S.data.mode === 'serve') {
    const r = await fetch('/api/episode?key=' + encodeURIComponent(key));
    ep = r.ok ? await r.json() : { error: 'server answered ' + r.status + ': ' + (await r.text()) };
  }
  if (!ep) ep = { error: 'episode ' + key + ' is not in this page' };
  S.cache[key] = ep;
  return ep;
}

function showTab(name) {
  document.querySelectorAll('nav button').forEach(b => b.classList.toggle('active', b.dataset.tab === name));
  document.querySelectorAll('section.tab').forEach(s => s.classList.toggle('active', s.id === 'tab-' + name));
}

// ---------------------------------------------------------------------------------- summary
function kvTable(obj) {
  return '<table class="kv">' + Object.entries(obj).map(([k, v]) =>
    `<tr><td>${esc(k)}</td><td>${esc(typeof v === 'object' ? JSON.stringify(v) : v)}</td></tr>`).join('') + '</table>';
}
function rowsTable(rows, cols) {
  if (!rows.length) return '<div class="empty">none</div>';
  cols = cols || [...new Set(rows.flatMap(r => Object.keys(r)))];
  return '<table><thead><tr>' + cols.map(c => `<th>${esc(c)}</th>`).join('') + '</tr></thead><tbody>' +
    rows.map(r => '<tr>' + cols.map(c => `<td class="${typeof r[c] === 'number' ? 'num' : ''}">${esc(fmt(r[c]))}</td>`).join('') + '</tr>').join('') +
    '</tbody></table>';
}
const METRIC_FIRST = ['reward/mean', 'loss', 'rollout/resolved@1', 'rollout/resolved@2', 'rollout/conditional_recovery',
  'adv/nonzero_frac', 'adv/token_nonzero_frac', 'pg/clip_frac', 'pg/approx_kl', 'grad_norm', 'rollout/invalid_turn_rate',
  'rollout/mean_turns', 'rollout/output_tokens', 'time/step_s'];
function sparkline(points) {
  const w = 220, h = 60, p = 4;
  const xs = points.map(q => q[0]), ys = points.map(q => q[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = x => p + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (w - 2 * p);
  const sy = y => h - p - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (h - 2 * p);
  const d = points.map((q, i) => (i ? 'L' : 'M') + sx(q[0]).toFixed(1) + ' ' + sy(q[1]).toFixed(1)).join(' ');
  const dots = points.length <= 40 ? points.map(q => `<circle cx="${sx(q[0]).toFixed(1)}" cy="${sy(q[1]).toFixed(1)}" r="2" fill="#1565c0"><title>step ${q[0]}: ${q[1]}</title></circle>`).join('') : '';
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><path d="${d}" fill="none" stroke="#1565c0" stroke-width="1.5"/>${dots}` +
    `<text x="${w - 2}" y="10" font-size="9" text-anchor="end" fill="#667">${esc(fmt(y1))}</text><text x="${w - 2}" y="${h - 1}" font-size="9" text-anchor="end" fill="#667">${esc(fmt(y0))}</text></svg>`;
}
function metricsHtml(rows) {
  if (!rows.length) return '<div class="empty">no metrics.jsonl in this run</div>';
  const keys = [...new Set(rows.flatMap(r => Object.keys(r)))].filter(k => k !== 'step');
  keys.sort((a, b) => { const ia = METRIC_FIRST.indexOf(a), ib = METRIC_FIRST.indexOf(b);
    return (ia < 0 ? 999 : ia) - (ib < 0 ? 999 : ib) || a.localeCompare(b); });
  return '<div class="metrics">' + keys.map(k => {
    const pts = rows.filter(r => typeof r[k] === 'number').map((r, i) => [typeof r.step === 'number' ? r.step : i + 1, r[k]]);
    if (!pts.length) return '';
    return `<div class="metric" data-metric="${esc(k)}"><div class="name">${esc(k)}</div>${sparkline(pts)}<div class="last">last (step ${pts[pts.length - 1][0]}): ${esc(fmt(pts[pts.length - 1][1], 4))}</div></div>`;
  }).join('') + '</div>';
}
function renderRunSummary(run, label) {
  let h = `<h2>${label ? esc(label) + ': ' : ''}${esc(run.kind)} run <span class="path">${esc(run.path)}</span></h2>`;
  h += '<h3>Trajectory stores</h3>' + rowsTable(run.sources, ['name', 'rows', 'parts', 'bad_parts', 'train']);
  h += '<h3>Tokenizer</h3>' + (run.tokenizer ? `<div>${esc(run.tokenizer.path)} <span class="count">(${esc(run.tokenizer.how)})</span></div>` : '<div class="empty">none found: tokens are shown as ids</div>');
  h += '<h3>Resolved@k, recounted from the stored rows</h3>' + rowsTable(run.recount);
  if (run.declared.length) h += '<h3>Resolved@k as the run\'s records state it</h3>' + rowsTable(run.declared);
  const groups = [];  // identical records (one per phase of a quickstart) shown once
  run.isolation.forEach(i => { const k = JSON.stringify(i.record); const g = groups.find(x => x.k === k);
    if (g) g.names.push(i.name); else groups.push({ k, names: [i.name], record: i.record }); });
  h += '<h3>Isolation</h3>' + (groups.length ? groups.map(g => {
    const iso = g.record && g.record.isolated;
    return `<div><b>${esc(g.names.join(', '))}</b>: <span class="${iso ? 'yes' : 'no'}">${iso ? 'isolated' : 'NOT isolated'}</span></div>` + kvTable(g.record || {});
  }).join('') : '<div class="empty">no isolation.json</div>');
  h += `<h3>Metrics over steps${run.metrics_source && run.metrics_source !== '.' ? ' (' + esc(run.metrics_source) + ')' : ''}</h3>` + metricsHtml(run.metrics);
  if (run.plots.length) h += '<h3>Plots</h3><div class="plots">' + run.plots.map(p => `<figure><img alt="${esc(p.name)}" src="${p.uri}"><figcaption>${esc(p.name)}</figcaption></figure>`).join('') + '</div>';
  h += '<h3>Config and records</h3>' + (run.files.length ? run.files.map(f => `<details><summary>${esc(f.name)}</summary><pre>${esc(f.text)}</pre></details>`).join('') : '<div class="empty">none</div>');
  return h;
}
function renderSummary() {
  const runs = S.data.runs;
  const el = $('#tab-summary');
  if (runs.length === 1) { el.innerHTML = renderRunSummary(runs[0], ''); return; }
  el.innerHTML = '<div class="twocol">' + runs.map((r, i) => `<div>${renderRunSummary(r, i ? 'B' : 'A')}</div>`).join('') + '</div>';
}

// ---------------------------------------------------------------------------------- task table
function columns() {
  const idx = S.data.index;
  const any = k => idx.some(e => e[k] !== null && e[k] !== undefined && e[k] !== '');
  const cols = [];
  if (new Set(idx.filter(e => e.run === 0).map(e => e.src)).size > 1) cols.push(['src', 'store']);
  cols.push(['iid', 'task'], ['chain', 'chain', 1], ['att', 'attempt', 1], ['res', 'resolved']);
  if (S.data.pairs) cols.push(['b_res', 'B resolved'], ['b_stop', 'B stop'], ['b_otok', 'B out tok', 1]);
  cols.push(['status', 'verdict'], ['stop', 'stop reason'], ['turns', 'turns', 1], ['inv', 'invalid turns', 1],
    ['itok', 'in tok', 1], ['otok', 'out tok', 1], ['wall', 'wall s', 1]);
  for (const [k, n] of [['route', 'route'], ['cat', 'category'], ['kind', 'mutation kind'], ['tier', 'tier']]) if (any(k)) cols.push([k, n]);
  if (any('step')) cols.push(['step', 'step', 1], ['reward', 'reward', 1], ['adv', 'advantage', 1]);
  if (any('seed')) cols.push(['seed', 'seed', 1]);
  return cols;
}
const FILTERS = [['src', 'store'], ['res', 'resolved'], ['att', 'attempt'], ['route', 'route'], ['cat', 'category'],
  ['kind', 'mutation kind'], ['tier', 'tier'], ['stop', 'stop reason'], ['step', 'step']];
function tableRows() {
  const idx = S.data.index.filter(e => e.run === 0);
  if (!S.data.pairs) return idx;
  const byKey = {}; S.data.index.forEach(e => { byKey[e.key] = e; });
  return idx.map(e => { const b = byKey[S.data.pairs[e.key]];
    return Object.assign({}, e, { b_key: b ? b.key : null, b_res: b ? b.res : null, b_stop: b ? b.stop : null, b_otok: b ? b.otok : null }); });
}
function renderFilters() {
  const rows = S.rows;
  let h = '<label>task <input id="f-text" type="search" placeholder="instance id contains"></label>';
  for (const [k, name] of FILTERS) {
    const vals = [...new Set(rows.map(e => e[k]).filter(v => v !== null && v !== undefined && v !== ''))];
    if (vals.length < 2 && !(k === 'res' && vals.length)) continue;
    vals.sort((a, b) => (typeof a === 'number' && typeof b === 'number') ? a - b : String(a).localeCompare(String(b)));
    h += `<label>${esc(name)} <select data-filter="${k}" id="f-${k}"><option value="">any</option>` +
      vals.map(v => `<option value="${esc(String(v))}">${esc(String(v))}</option>`).join('') + '</select></label>';
  }
  h += '<label><input type="checkbox" id="f-invalid"> invalid turns &gt; 0</label>';
  if (S.data.pairs) h += '<label><input type="checkbox" id="f-differs"> A and B differ</label>';
  h += '<span class="count" id="row-count"></span>';
  $('#filters').innerHTML = h;
  $('#filters').querySelectorAll('select, input').forEach(el => el.addEventListener(el.type === 'search' ? 'input' : 'change', applyFilters));
}
function applyFilters() {
  const text = ($('#f-text') || {}).value || '';
  const sel = {};
  $('#filters').querySelectorAll('select[data-filter]').forEach(s => { if (s.value !== '') sel[s.dataset.filter] = s.value; });
  const inv = ($('#f-invalid') || {}).checked, differs = ($('#f-differs') || {}).checked;
  S.filtered = S.rows.filter(e => {
    if (text && !e.iid.toLowerCase().includes(text.toLowerCase())) return false;
    for (const k in sel) if (String(e[k]) !== sel[k]) return false;
    if (inv && !(e.inv > 0)) return false;
    if (differs && e.res === e.b_res) return false;
    return true;
  });
  sortRows();
  renderTable();
}
function sortRows() {
  const c = S.sort.col; if (!c) return;
  const d = S.sort.dir;
  S.filtered.sort((a, b) => {
    const x = a[c], y = b[c];
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (typeof x === 'number' || typeof x === 'boolean') && (typeof y === 'number' || typeof y === 'boolean') ? (x - y) * d : String(x).localeCompare(String(y)) * d;
  });
}
const MAX_ROWS = 3000;
function cell(e, k) {
  const v = e[k];
  if (k === 'res' || k === 'b_res') return v === null || v === undefined ? '<td></td>' : `<td class="${v ? 'yes' : 'no'}">${v ? 'yes' : 'no'}</td>`;
  if (k === 'iid') return `<td class="iid">${esc(v)}</td>`;
  if (k === 'status') return `<td class="st-${v === 'FULL' ? 'PASSED' : v === 'NO' ? 'FAILED' : 'SKIPPED'}">${esc(v)}</td>`;
  return `<td class="${typeof v === 'number' ? 'num' : ''}">${esc(fmt(v))}</td>`;
}
function renderTable() {
  const cols = S.cols;
  const head = '<tr>' + cols.map(([k, n, num]) => `<th data-col="${k}" class="${num ? 'num' : ''}${S.sort.col === k ? (S.sort.dir > 0 ? ' sorted-asc' : ' sorted-desc') : ''}">${esc(n)}</th>`).join('') + '</tr>';
  const rows = S.filtered.slice(0, MAX_ROWS).map(e =>
    `<tr data-key="${esc(e.key)}" class="${S.current === e.key ? 'selected' : ''}">` + cols.map(([k]) => cell(e, k)).join('') + '</tr>').join('');
  $('#task-table').innerHTML = `<thead>${head}</thead><tbody>${rows}</tbody>`;
  const total = S.rows.length, shown = S.filtered.length;
  $('#row-count').textContent = `${shown} of ${total} episodes` + (shown > MAX_ROWS ? ` (first ${MAX_ROWS} listed: filter to narrow)` : '');
}
function setupTable() {
  S.rows = tableRows();
  S.cols = columns();
  renderFilters();
  $('#task-table').addEventListener('click', ev => {
    const th = ev.target.closest('th');
    if (th) { const c = th.dataset.col; S.sort = { col: c, dir: S.sort.col === c ? -S.sort.dir : 1 }; sortRows(); renderTable(); return; }
    const tr = ev.target.closest('tr[data-key]');
    if (tr) openEpisode(tr.dataset.key);
  });
  applyFilters();
}

// ---------------------------------------------------------------------------------- episode
function diffHtml(patch) {
  if (!patch) return '<div class="empty">(empty patch: the agent changed no file)</div>';
  return '<pre class="diff">' + patch.replace(/\n$/, '').split('\n').map(l => {
    let c = 'ctx';
    if (l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ')) c = 'file';
    else if (l.startsWith('+')) c = 'add'; else if (l.startsWith('-')) c = 'del'; else if (l.startsWith('@@')) c = 'hunk';
    return `<span class="${c}">${esc(l)}</span>`;
  }).join('') + '</pre>';
}
function verdictHtml(v) {
  if (!v) return '<div class="empty">no verdict stored</div>';
  let h = '<div class="chips">' +
    `<span class="chip ${v.resolved ? 'yes' : 'no'}">${v.resolved ? 'resolved' : 'not resolved'}</span>` +
    `<span class="chip">status ${esc(v.status)}</span>` +
    `<span class="chip">patch ${v.patch_applied ? 'applied' + (v.apply_method ? ' (' + esc(v.apply_method) + ')' : '') : 'not applied'}</span>` +
    (v.infra_failure ? `<span class="chip no">infra failure: ${esc(v.infra_reason)}</span>` : '') +
    (v.duration_s ? `<span class="chip">${fmt(v.duration_s, 2)} s</span>` : '') + '</div>';
  if (v.error) h += `<div><b>error:</b> ${esc(v.error)}</div>`;
  const tests = (v.tests || []).slice();
  if (tests.length) {
    const ok = t => t.status === 'PASSED' || t.status === 'XFAIL';
    tests.sort((a, b) => ok(a) - ok(b));  // failures first
    const row = t => `<tr><td><code>${esc(t.test_id)}</code>${t.traceback ? `<details><summary>traceback</summary><pre>${esc(t.traceback)}</pre></details>` : ''}</td>` +
      `<td>${esc(t.kind)}</td><td class="st-${esc(t.status)}">${esc(t.status)}</td></tr>`;
    const failed = tests.filter(t => !ok(t)).length, passed = tests.length - failed;
    const shown = tests.slice(0, failed + 4), rest = tests.slice(failed + 4);
    h += `<div class="count">${tests.length} tests: ${passed} passed, ${failed} not</div>`;
    h += '<table class="tests"><thead><tr><th>test</th><th>kind</th><th>outcome</th></tr></thead><tbody>' + shown.map(row).join('') + '</tbody></table>';
    if (rest.length) h += `<details><summary>${rest.length} more passed</summary><table class="tests"><tbody>${rest.map(row).join('')}</tbody></table></details>`;
  } else h += '<div class="empty">no test ran</div>';
  h += '<h3>Diagnostics (what the failure context shows)</h3>' + (v.diagnostics ? `<pre>${esc(v.diagnostics)}</pre>` : '<div class="empty">none</div>');
  return h;
}
function messagesHtml(msgs) {
  if (!msgs.length) return '<div class="empty">no messages stored</div>';
  return msgs.map((m, i) => {
    const role = m.role || '?';
    const inv = m.invalid === true || m.invalid === 'True';
    let who = `<span>${esc(role)}${m.name ? ' · ' + esc(m.name) : ''}</span>`;
    if (m.turn !== undefined) who += `<span>turn ${esc(m.turn)}</span>`;
    if (m.finish_reason) who += `<span>finish: ${esc(m.finish_reason)}</span>`;
    if (inv) who += `<span>INVALID ${esc(m.errors || '')}</span>`;
    if (m.ok === false || m.ok === 'False') who += '<span>tool error</span>';
    let body = '';
    if (role === 'tool' && m.arguments) body += `<pre>${esc('arguments: ' + (typeof m.arguments === 'string' ? m.arguments : JSON.stringify(m.arguments)))}</pre>`;
    body += `<pre>${esc(m.content)}</pre>`;
    const box = `<div class="msg ${esc(role)}${inv ? ' invalid' : ''}" data-msg="${i}"><div class="who">${who}</div>${body}</div>`;
    return role === 'system' ? `<details><summary>system prompt</summary>${box}</details>` : box;
  }).join('');
}
function segAt(rle) {
  const out = []; for (const [v, n] of rle) for (let i = 0; i < n; i++) out.push(v); return out;
}
function vocabFor(key, ep) {
  const run = S.data.runs[parseInt(key.split(':')[0], 10)] || S.data.runs[0];
  return ep.vocab || run.vocab || {};
}
function tokText(t) {
  return t.replace(/\n/g, '\u21b5\n').replace(/\t/g, '\u21e5');
}
function tokenColor(mode, m, lp, adv) {
  if (mode === 'logprob' && lp !== null && m) { const p = Math.exp(lp); return `background: hsl(${Math.round(120 * p)}, 75%, 82%)`; }
  if (mode === 'advantage' && m && adv !== null) { const a = Math.max(-1, Math.min(1, adv)); return a >= 0 ? `background: rgba(46,160,67,${0.15 + 0.6 * a})` : `background: rgba(218,54,51,${0.15 + 0.6 * -a})`; }
  return '';
}
function tokensHtml(key, ep, suffix) {
  const T = ep.tokens;
  if (!T) return '<div class="empty">no tokens stored</div>';
  const vocab = vocabFor(key, ep);
  const hasVocab = Object.keys(vocab).length > 0;
  const seg = segAt(T.seg);
  const segInfo = {}; (T.segments || []).forEach(s => { segInfo[s.seg] = s; });
  const ends = new Set((S.data.runs[parseInt(key.split(':')[0], 10)] || {}).end_ids || []);
  const mode = S.colorBy;
  const hasAdv = T.adv !== undefined;
  const trainable = [...T.mask].filter(c => c === '1').length;
  let head = `<div class="chips"><span class="chip">${T.n} tokens</span><span class="chip">prompt ${T.prompt_len}</span>` +
    `<span class="chip">trainable (mask 1): ${trainable}${T.gap ? ' shown' : ''}</span><span class="chip">turns ${(T.segments || []).length}</span>`;
  if (hasAdv) head += `<span class="chip">step ${esc(T.step)}</span><span class="chip">reward ${esc(fmt(T.reward))}</span><span class="chip">advantage ${esc(fmt(T.adv, 4))}</span>` +
    (T.penalty !== null && T.penalty !== undefined ? `<span class="chip">advantage on invalid turns: ${esc(T.penalty)}</span>` : '');
  head += '</div>';
  if (T.adv_note) head += note(T.adv_note);
  const segs = T.segments || [];
  if (segs.length) {  // one line per generated turn: a cut or invalid turn is seen without scrolling
    head += '<table class="turns"><thead><tr><th>turn</th><th class="num">tokens</th><th>positions</th><th>end</th><th>finish</th><th>invalid</th>' +
      (hasAdv ? '<th class="num">advantage</th>' : '') + '</tr></thead><tbody>' + segs.map(g => {
        const adv = hasAdv ? (g.invalid && T.penalty !== null && T.penalty !== undefined ? T.penalty : T.adv) : null;
        return `<tr class="${g.cut || g.invalid ? 'warn' : ''}"><td>T${g.seg}</td><td class="num">${g.tokens}</td><td>${g.start}–${g.end}</td>` +
          `<td class="${g.cut ? 'no' : ''}">${g.eot === undefined ? '?' : g.eot ? 'end-of-turn' : 'CUT (no end token)'}</td><td>${esc(g.finish || '')}</td>` +
          `<td class="${g.invalid ? 'no' : ''}">${g.invalid ? 'yes: ' + esc((g.reasons || []).join(', ')) : ''}</td>` +
          (hasAdv ? `<td class="num">${esc(fmt(adv, 4))}</td>` : '') + '</tr>';
      }).join('') + '</tbody></table>';
  }
  head += `<div class="legend"><label>colour by <select class="color-by" id="color-by${suffix}">` +
    ['mask', 'logprob', 'advantage'].filter(m => m !== 'advantage' || hasAdv).filter(m => m !== 'logprob' || T.lp)
      .map(m => `<option value="${m}"${m === mode ? ' selected' : ''}>${m === 'mask' ? 'loss mask' : m === 'logprob' ? 'behaviour log-prob' : 'advantage'}</option>`).join('') + '</select></label>' +
    '<span class="tk pr">prompt (mask 0)</span><span class="tk m0">observation (mask 0)</span><span class="tk m1">trained on (mask 1)</span>' +
    '<span class="tk m1 inv">invalid turn</span><span class="tk bad">mask \u2260 segment</span><span class="segtag">T1</span> turn start' +
    '<span class="segtag cut">cut</span> turn without end token' + (hasVocab ? '' : ' · <b>ids shown (no tokenizer)</b>') + '</div>';
  const prompt = [], parts = [];
  let prevSeg = 0, promptBad = 0;
  for (let j = 0; j < T.ids.length; j++) {
    const pos = T.gap && j >= T.gap.at ? j + T.gap.skipped : j;
    const out = pos < T.prompt_len ? prompt : parts;
    if (T.gap && j === T.gap.at) out.push(`<span class="gap">[\u2026 ${T.gap.skipped} tokens not shown \u2026]</span>`);
    const id = T.ids[j], m = T.mask[j] === '1', s = seg[j];
    if (s > 0 && s !== prevSeg) { const si = segInfo[s] || {};
      out.push(`<span class="segtag${si.invalid ? ' inv' : ''}" title="assistant turn ${s}${si.invalid ? ' (invalid: ' + esc((si.reasons || []).join(', ')) + ')' : ''}">T${s}</span>`); }
    const si = segInfo[s] || {};
    const lp = T.lp ? T.lp[j] : null;
    let adv = null;
    if (hasAdv && m) adv = (si.invalid && T.penalty !== null && T.penalty !== undefined) ? T.penalty : T.adv;
    let cls = 'tk ' + (m ? 'm1' : (pos < T.prompt_len ? 'pr' : 'm0'));
    if (si.invalid && s > 0) cls += ' inv';
    if (m !== (s > 0) || (m && pos < T.prompt_len)) { cls += ' bad'; if (pos < T.prompt_len) promptBad++; }
    if (ends.has(id)) cls += ' eot';
    const text = hasVocab ? (vocab[id] !== undefined ? vocab[id] : `\u27e8${id}\u27e9`) : `${id} `;
    const title = `#${pos} id ${id} mask ${T.mask[j]} seg ${s}` + (lp !== null ? ` logp ${lp}` : '') + (adv !== null ? ` adv ${fmt(adv, 4)}` : '');
    out.push(`<span class="${cls}" data-pos="${pos}" data-m="${T.mask[j]}" title="${esc(title)}" style="${tokenColor(mode, m, lp, adv)}">${esc(tokText(text))}</span>`);
    const next = j + 1 < T.ids.length ? seg[j + 1] : 0;
    if (s > 0 && next !== s && si.cut && pos === si.end) out.push('<span class="segtag cut" title="this turn does not end with an end-of-turn token">cut</span>');
    prevSeg = s;
  }
  const promptHead = `prompt: ${T.prompt_len} tokens (system, tools, issue${T.prompt_len && S.current && (S.data.index.find(x => x.key === key) || {}).att > 1 ? ', failure context' : ''})` +
    (promptBad ? ` \u2014 ${promptBad} marked trainable!` : ', mask 0');
  return head + `<details class="prompt-tokens"${promptBad ? ' open' : ''}><summary>${esc(promptHead)}</summary><div class="tokens">${prompt.join('')}</div></details>` +
    `<div class="tokens" id="tokens-body${suffix}">${parts.join('')}</div>`;
}
function episodeColumn(key, ep, suffix, label) {
  if (ep.error) return note(ep.error, true);
  const e = S.data.index.find(x => x.key === key) || {};
  let h = `<h2>${label ? esc(label) + ': ' : ''}${esc(e.iid)} · chain ${esc(e.chain)} · attempt ${esc(e.att)}</h2>`;
  h += '<div class="chips">' + `<span class="chip ${e.res ? 'yes' : 'no'}">${e.res ? 'resolved' : 'not resolved'}</span>` +
    `<span class="chip">store ${esc(e.src)}</span><span class="chip">stop: ${esc(e.stop)}</span><span class="chip">${esc(e.turns)} turns</span>` +
    `<span class="chip">${esc(e.inv)} invalid</span><span class="chip">${esc(e.itok)} in / ${esc(e.otok)} out tokens</span>` +
    (e.seed !== null && e.seed !== undefined ? `<span class="chip">seed ${esc(e.seed)}</span>` : '') +
    (e.ctx ? `<span class="chip">context ${esc(e.ctx)}</span>` : '') + (e.wall !== null && e.wall !== undefined ? `<span class="chip">${esc(fmt(e.wall, 2))} s</span>` : '') + '</div>';
  h += (ep.notes || []).map(n => note(n, true)).join('');
  if (e.att > 1 || ep.context) h += `<h3>Failure context given to attempt ${esc(e.att)}</h3><div id="ep-context${suffix}">` +
    (ep.context ? `<pre>${esc(ep.context)}</pre>` : '<div class="empty">none (context variant: ' + esc(e.ctx) + ')</div>') + '</div>';
  h += `<h3>Conversation</h3><div id="ep-conversation${suffix}">${messagesHtml(ep.messages || [])}</div>`;
  h += `<h3>Final diff</h3><div id="ep-diff${suffix}">${diffHtml(ep.patch)}</div>`;
  h += `<h3>Verdict</h3><div id="ep-verdict${suffix}">${verdictHtml(ep.verdict)}</div>`;
  h += `<h3>Tokens the trainer used</h3><div id="ep-tokens${suffix}" data-key="${esc(key)}">${tokensHtml(key, ep, suffix)}</div>`;
  return h;
}
async function openEpisode(key) {
  S.current = key;
  document.querySelectorAll('#task-table tr.selected').forEach(r => r.classList.remove('selected'));
  const tr = document.querySelector(`#task-table tr[data-key="${CSS.escape(key)}"]`); if (tr) tr.classList.add('selected');
  showTab('episode');
  const el = $('#episode');
  el.innerHTML = '<div class="empty">loading\u2026</div>';
  const keys = [key];
  if (S.data.pairs) keys.push(S.data.pairs[key] || null);
  const eps = await Promise.all(keys.map(k => k ? getEpisode(k) : Promise.resolve({ error: 'run B has no episode on this task, chain and attempt' })));
  if (S.current !== key) return;
  const two = keys.length > 1;
  el.innerHTML = `<div class="ep-cols${two ? ' two' : ''}">` + keys.map((k, i) =>
    `<div class="ep-col" id="ep-col${i ? '-b' : ''}">${episodeColumn(k || '', eps[i], i ? '-b' : '', two ? (i ? 'B' : 'A') : '')}</div>`).join('') + '</div>';
  el.dataset.key = key;
  el.querySelectorAll('select.color-by').forEach(s => s.addEventListener('change', () => { S.colorBy = s.value; openEpisode(key); }));
  location.hash = 'episode=' + encodeURIComponent(key);
}

// ---------------------------------------------------------------------------------- start
async function start() {
  try {
    S.data = await loadData();
  } catch (err) {
    $('#notes').innerHTML = note('could not read the page data: ' + err, true);
    return;
  }
  const d = S.data;
  $('#run-path').textContent = d.runs.map((r, i) => (d.runs.length > 1 ? (i ? 'B: ' : 'A: ') : '') + r.path + ' (' + r.kind + ')').join('   vs   ');
  $('#generated').textContent = 'generated ' + d.generated + (d.mode === 'serve' ? ' \u00b7 served from 127.0.0.1' : '');
  $('#notes').innerHTML = d.runs.flatMap((r, i) => r.notes.map(n => note((d.runs.length > 1 ? (i ? 'B: ' : 'A: ') : '') + n, /unreadable|not valid|misaligned/.test(n)))).join('');
  document.querySelectorAll('nav button').forEach(b => b.addEventListener('click', () => showTab(b.dataset.tab)));
  renderSummary();
  setupTable();
  document.body.dataset.ready = '1';
  const m = /episode=([^&]+)/.exec(location.hash);
  if (m) openEpisode(decodeURIComponent(m[1])); else showTab(d.index.length ? 'tasks' : 'summary');
}
document.addEventListener('DOMContentLoaded', start);
"""
