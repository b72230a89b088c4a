// `--report report.html`: one self-contained page (inline CSS and SVG: no script, no
// font, image or style fetched), readable at a glance: the run's conditions at the top,
// then plots (ROC per hash, recall per transform, score histograms of same-file and
// different-file pairs, throughput and latency, and with --compare the changes) and the
// tables behind them. Every string from the corpus or the command line is HTML-escaped.
import type { Comparison } from './compare.js';
import { conditionsText } from './output.js';
import type { BenchResult, HashQuality } from './run.js';
import { visible } from './text.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
const esc = (text: string) => escapeHtml(visible(text));

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const W = 560;
const H = 300;
const M = { left: 56, right: 16, top: 16, bottom: 44 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;
const num = (x: number) => (Math.round(x * 10) / 10).toString();

function figure(id: string, caption: string, body: string, legend: [string, string][] = []): string {
  const keys = legend.map(([name, colour]) => `<span class="key"><i style="background:${colour}"></i>${esc(name)}</span>`).join(' ');
  return `<figure data-plot="${escapeHtml(id)}"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img" aria-label="${esc(caption)}"><title>${esc(caption)}</title>${body}</svg>` +
    `<figcaption>${esc(caption)}${keys ? `<br>${keys}` : ''}</figcaption></figure>`;
}

/** Axes with ticks: x from 0 to xMax, y from 0 to yMax. */
function axes(xMax: number, yMax: number, xLabel: string, yLabel: string, xFormat = (v: number) => num(v), yFormat = (v: number) => num(v)): string {
  const parts = [`<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="#fff" stroke="#999"/>`];
  for (let i = 0; i <= 5; i++) {
    const x = M.left + (PW * i) / 5;
    const y = M.top + PH - (PH * i) / 5;
    parts.push(`<line x1="${num(x)}" y1="${M.top + PH}" x2="${num(x)}" y2="${M.top + PH + 4}" stroke="#666"/><text x="${num(x)}" y="${M.top + PH + 16}" text-anchor="middle">${esc(xFormat((xMax * i) / 5))}</text>`);
    parts.push(`<line x1="${M.left - 4}" y1="${num(y)}" x2="${M.left + PW}" y2="${num(y)}" stroke="#eee"/><text x="${M.left - 6}" y="${num(y + 4)}" text-anchor="end">${esc(yFormat((yMax * i) / 5))}</text>`);
  }
  parts.push(`<text x="${M.left + PW / 2}" y="${H - 6}" text-anchor="middle">${esc(xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  return parts.join('');
}

const px = (x: number, xMax: number) => M.left + (PW * Math.min(x, xMax)) / (xMax || 1);
const py = (y: number, yMax: number) => M.top + PH - (PH * Math.min(y, yMax)) / (yMax || 1);

function rocPlot(kind: string, qs: HashQuality[]): string {
  const lines = qs.filter((q) => q.roc !== null).map((q, i) => {
    const pts = q.roc!.points.map((p) => `${num(px(p.fpr, 1))},${num(py(p.tpr, 1))}`).join(' ');
    return `<polyline points="${pts}" fill="none" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="2"/>`;
  });
  const diagonal = `<line x1="${px(0, 1)}" y1="${py(0, 1)}" x2="${px(1, 1)}" y2="${py(1, 1)}" stroke="#bbb" stroke-dasharray="4 4"/>`;
  const legend = qs.filter((q) => q.roc !== null).map((q, i): [string, string] => [`${q.hash} (AUC ${q.roc!.auc.toFixed(4)})`, COLOURS[i % COLOURS.length]]);
  return figure(`roc-${kind}`, `ROC, ${kind}: recall against false matches over every threshold`, axes(1, 1, 'false-match rate (different originals)', 'recall (variants)', (v) => v.toFixed(1), (v) => v.toFixed(1)) + diagonal + lines.join(''), legend);
}

/** The rule a hash's bars show: verify-file for ours, the same threshold for peers. */
const barRule = (q: HashQuality) => q.rules.find((r) => r.name === 'verify-file')?.name ?? q.rules[0].name;

function recallPlot(kind: string, qs: HashQuality[]): string {
  const transforms = qs[0].transforms.map((t) => t.transform);
  const group = PW / Math.max(1, transforms.length);
  const bar = (group * 0.8) / qs.length;
  const bars: string[] = [];
  qs.forEach((q, s) => {
    const rule = barRule(q);
    q.transforms.forEach((t, g) => {
      const v = t.matched[rule] ?? 0;
      const x = M.left + g * group + group * 0.1 + s * bar;
      bars.push(`<rect x="${num(x)}" y="${num(py(v, 1))}" width="${num(bar)}" height="${num(py(0, 1) - py(v, 1))}" fill="${COLOURS[s % COLOURS.length]}"><title>${esc(`${q.hash} ${t.transform}: ${(100 * v).toFixed(1)} %`)}</title></rect>`);
    });
  });
  // slanted, so that a dozen names fit under their bars
  const labels = transforms.map((t, g) => {
    const x = num(M.left + g * group + group / 2);
    return `<text transform="translate(${x} ${M.top + PH + 10}) rotate(-25)" text-anchor="end" font-size="9">${esc(t)}</text>`;
  }).join('');
  const frame = `<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="#fff" stroke="#999"/>` +
    [0, 0.25, 0.5, 0.75, 1].map((v) => `<line x1="${M.left}" y1="${num(py(v, 1))}" x2="${M.left + PW}" y2="${num(py(v, 1))}" stroke="#eee"/><text x="${M.left - 6}" y="${num(py(v, 1) + 4)}" text-anchor="end">${100 * v} %</text>`).join('');
  const legend = qs.map((q, s): [string, string] => [`${q.hash} (${barRule(q)})`, COLOURS[s % COLOURS.length]]);
  return figure(`recall-${kind}`, `Recall per transform, ${kind}: share of variants matched`, frame + bars.join('') + labels, legend);
}

function histogramPlot(q: HashQuality): string {
  const share = (h: HashQuality['histogram']['same']) => {
    const total = h.none + Object.values(h.counts).reduce((a, b) => a + b, 0);
    return Object.entries(h.counts).map(([s, c]) => [Number(s), total === 0 ? 0 : c / total] as const).sort((a, b) => a[0] - b[0]);
  };
  const same = share(q.histogram.same);
  const different = share(q.histogram.different);
  const xMax = Math.max(100, ...same.map(([s]) => s), ...different.map(([s]) => s));
  const yMax = Math.max(0.01, ...same.map(([, v]) => v), ...different.map(([, v]) => v)) * 1.05;
  const bars = (data: (readonly [number, number])[], colour: string, dx: number) => data.map(([s, v]) =>
    `<rect x="${num(px(s, xMax) + dx)}" y="${num(py(v, yMax))}" width="2.5" height="${num(py(0, yMax) - py(v, yMax))}" fill="${colour}" fill-opacity="0.75"/>`).join('');
  const body = axes(xMax, yMax, `score (${q.score})`, 'share of pairs', (v) => num(v), (v) => `${(100 * v).toFixed(0)} %`) + bars(different, COLOURS[1], -1.5) + bars(same, COLOURS[0], 1);
  return figure(`histogram-${q.hash}`, `${q.hash}: scores of same-file pairs (original, variant) and different-file pairs`, body, [['same file', COLOURS[0]], ['different files', COLOURS[1]]]);
}

/** Horizontal bars with labels: one row per entry, several values (series) per row. */
function barRows(id: string, caption: string, unit: string, rows: { label: string; values: (number | null)[] }[], series: string[]): string {
  const max = Math.max(1e-9, ...rows.flatMap((r) => r.values.filter((v): v is number => v !== null)));
  const rowH = PH / Math.max(1, rows.length);
  const barH = (rowH * 0.8) / series.length;
  const parts = [`<rect x="${M.left + 60}" y="${M.top}" width="${PW - 60}" height="${PH}" fill="#fff" stroke="#999"/>`];
  rows.forEach((r, i) => {
    parts.push(`<text x="${M.left + 54}" y="${num(M.top + i * rowH + rowH / 2 + 4)}" text-anchor="end" font-size="10">${esc(r.label)}</text>`);
    r.values.forEach((v, s) => {
      if (v === null) return;
      const w = ((PW - 70) * v) / max;
      const y = M.top + i * rowH + rowH * 0.1 + s * barH;
      parts.push(`<rect x="${M.left + 60}" y="${num(y)}" width="${num(w)}" height="${num(barH)}" fill="${COLOURS[s % COLOURS.length]}"><title>${esc(`${r.label} ${series[s]}: ${v.toFixed(3)} ${unit}`)}</title></rect>`);
      parts.push(`<text x="${num(M.left + 64 + w)}" y="${num(y + barH / 2 + 4)}" font-size="9">${esc(v < 10 ? v.toFixed(2) : v.toFixed(0))}</text>`);
    });
  });
  parts.push(`<text x="${M.left + PW / 2 + 30}" y="${H - 6}" text-anchor="middle">${esc(unit)}</text>`);
  return figure(id, caption, parts.join(''), series.map((s, i): [string, string] => [s, COLOURS[i % COLOURS.length]]));
}

function compareRecallPlot(c: Comparison): string {
  const rows = c.recall.filter((d) => d.change !== 0).slice(0, 24);
  const shown = rows.length > 0 ? rows : c.recall.slice(0, 12);
  const max = Math.max(0.01, ...shown.map((d) => Math.abs(d.change)));
  const rowH = PH / Math.max(1, shown.length);
  const mid = M.left + 150 + (PW - 150) / 2;
  const parts = [`<line x1="${mid}" y1="${M.top}" x2="${mid}" y2="${M.top + PH}" stroke="#666"/>`];
  shown.forEach((d, i) => {
    const w = (((PW - 150) / 2) * d.change) / max;
    const y = M.top + i * rowH;
    parts.push(`<text x="${M.left + 146}" y="${num(y + rowH / 2 + 3)}" text-anchor="end" font-size="8">${esc(d.what)}</text>`);
    parts.push(`<rect x="${num(Math.min(mid, mid + w))}" y="${num(y + rowH * 0.15)}" width="${num(Math.max(0.5, Math.abs(w)))}" height="${num(rowH * 0.7)}" fill="${d.change >= 0 ? COLOURS[2] : COLOURS[1]}"/>`);
  });
  parts.push(`<text x="${mid}" y="${H - 6}" text-anchor="middle">change in recall, percentage points (largest ${(100 * max).toFixed(1)})</text>`);
  return figure('compare-recall', 'Recall against the compared run (green: more found)', parts.join(''));
}

function tableHtml(header: string[], rows: string[][]): string {
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}

const pct = (v: number | null | undefined, d = 1) => (v === null || v === undefined ? '-' : `${(100 * v).toFixed(d)} %`);
const f = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? '-' : v.toFixed(d));

export function reportHtml(r: BenchResult, comparison: Comparison | null): string {
  const sections: string[] = [];
  const kinds = [...new Set(r.quality.map((q) => q.kind))];
  if (kinds.length > 0) {
    sections.push('<h2>Which edits still match</h2><div class="plots">');
    for (const kind of kinds) sections.push(recallPlot(kind, r.quality.filter((q) => q.kind === kind)));
    sections.push('</div>');
    sections.push('<div class="tables">');
    for (const q of r.quality) {
      const rules = q.rules.map((x) => x.name);
      sections.push(`<div><h3>${esc(q.hash)} <small>(${q.origin}, ${q.kind}, ${q.originals} originals)</small></h3>`);
      sections.push(tableHtml(['transform', 'variants', ...rules, 'mean score'], [
        ...q.transforms.map((t) => [t.transform, String(t.variants), ...rules.map((n) => pct(t.matched[n])), f(t.meanScore, 1)]),
        ['all', String(q.transforms.reduce((n, t) => n + t.variants, 0)), ...rules.map((n) => pct(q.overall[n])), ''],
      ]));
      sections.push(`<p class="rules">${q.rules.map((x) => `<b>${esc(x.name)}</b>: ${esc(x.description)}`).join('; ')}</p></div>`);
    }
    sections.push('</div>');
    sections.push('<h2>Same file or not: ROC and score distributions</h2><div class="plots">');
    for (const kind of kinds) sections.push(rocPlot(kind, r.quality.filter((q) => q.kind === kind)));
    for (const q of r.quality) sections.push(histogramPlot(q));
    sections.push('</div>');
    sections.push(tableHtml(['hash', 'pairs of distinct originals', 'false matches', 'AUC', `threshold at ${pct(r.conditions.targetFalseMatchRate)} false matches`, 'recall there'], r.quality.map((q) => [
      q.hash,
      `${q.falseMatches.pairs}${q.falseMatches.sampled ? ` (seeded sample of ${q.falseMatches.possible})` : ''}`,
      Object.entries(q.falseMatches.rate).map(([k, v]) => `${k} ${pct(v, 3)}`).join(', '),
      f(q.roc?.auc, 4),
      q.atTargetRate === null ? '-' : `score >= ${q.atTargetRate.threshold}`,
      pct(q.atTargetRate?.tpr),
    ])));
  }
  sections.push('<h2>Speed</h2><div class="plots">');
  if (r.speed.length > 0) {
    sections.push(barRows('throughput', 'Files per second: decode and hash (the pool) against decode only', 'files per second', r.speed.map((s) => ({ label: s.kind, values: [s.filesPerSecond, s.floor?.filesPerSecond ?? null] })), ['provenant', 'decode only']));
  }
  const latency = [
    ...r.index.map((i) => ({ label: `index ${i.hashType}`, values: [i.p50Ms, i.p99Ms, null] })),
    ...(r.server?.endpoints ?? []).map((e) => ({ label: e.endpoint, values: [e.p50Ms, e.p99Ms, e.maxMs] })),
  ];
  if (latency.length > 0) sections.push(barRows('latency', 'Latency: match-index queries in process and requests to the deployment', 'milliseconds', latency, ['p50', 'p99', 'max']));
  sections.push('</div>');
  if (r.speed.length > 0) sections.push(tableHtml(['type', 'files', 'files/s', 'decode only, files/s', 'of decode'], r.speed.map((s) => [s.kind, String(s.files), f(s.filesPerSecond, 1), f(s.floor?.filesPerSecond, 1), s.ofFloor === null ? '-' : `${s.ofFloor.toFixed(2)}x`])));
  if (r.peerSpeed.length > 0) sections.push(tableHtml(['peer', 'files', 'files/s'], r.peerSpeed.map((p) => [p.name, String(p.files), f(p.filesPerSecond, 1)])));
  if (r.index.length > 0) sections.push(tableHtml(['index', 'stored', 'synthetic', 'queries', 'p50 ms', 'p99 ms', 'bytes/fingerprint', 'original found'], r.index.map((i) => [i.hashType, String(i.stored), String(i.synthetic), String(i.queries), f(i.p50Ms, 3), f(i.p99Ms, 3), f(i.bytesPerFingerprint, 1), pct(i.foundOriginal)])));
  if (r.server !== null) {
    sections.push(`<h2>Deployment</h2><p>${esc(r.server.url)}: ${r.server.concurrency} requests in flight, ${r.server.durationS} s per endpoint.</p>`);
    sections.push(tableHtml(['endpoint', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'], r.server.endpoints.map((e) => [e.endpoint, String(e.requests), f(e.rps, 1), f(e.p50Ms, 1), f(e.p99Ms, 1), f(e.maxMs, 1), Object.entries(e.errors).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'])));
  }
  if (comparison !== null) {
    sections.push(`<h2>Against the run of ${esc(comparison.old.date)}</h2>`);
    for (const w of comparison.warnings) sections.push(`<p class="warn">${esc(w)}</p>`);
    sections.push(`<div class="plots">${compareRecallPlot(comparison)}</div>`);
    sections.push(tableHtml(['figure', 'old', 'new', 'change'], [...comparison.recall.filter((d) => d.change !== 0), ...comparison.separation].map((d) => [d.what, f(d.old, 4), f(d.new, 4), f(d.change, 4)])));
    sections.push(tableHtml(['speed', 'old', 'new', 'new / old'], comparison.speed.map((d) => [d.what, f(d.old, 3), f(d.new, 3), d.ratio === null ? '-' : `${d.ratio.toFixed(2)}x`])));
  }
  if (r.junk.length > 0) {
    sections.push(`<h2 id="junk">Named as media but not (${r.junk.length})</h2><ul class="junk">${r.junk.map((j) => `<li><code>${esc(j.path)}</code>: ${esc(j.reason)}</li>`).join('')}</ul>`);
  }
  if (r.skipped.length > 0) {
    sections.push(`<h2>Skipped files (${r.skipped.length})</h2><ul>${r.skipped.map((s) => `<li><code>${esc(s.path)}</code>: ${esc(s.reason)}</li>`).join('')}</ul>`);
  }
  const suite = Object.entries(r.conditions.suite.transforms).map(([kind, ts]) => `<li><b>${kind}</b>: ${ts.map((t) => `${esc(t.id)} (${esc(t.description)})`).join(', ')}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>provenant bench report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
pre.conditions{background:#f4f4f4;padding:10px;white-space:pre-wrap}
.plots,.tables{display:flex;flex-wrap:wrap;gap:12px}.tables>div{max-width:580px}
figure{margin:0;border:1px solid #ddd;padding:8px;background:#fafafa}
figure svg{font:11px sans-serif;display:block;max-width:100%;height:auto}
figcaption{font-size:12px;max-width:560px}
.key{display:inline-block;margin-right:10px}.key i{display:inline-block;width:10px;height:10px;margin-right:4px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;white-space:nowrap}th:first-child,td:first-child{text-align:left}
.rules{font-size:12px;color:#555}.warn{color:#a00}
</style></head><body>
<h1>provenant bench</h1>
<pre class="conditions">${escapeHtml(conditionsText(r))}</pre>
<details><summary>The variant suite ${esc(r.conditions.suite.name)} v${r.conditions.suite.version}</summary><ul>${suite}</ul></details>
${sections.join('\n')}
</body></html>
`;
}
