// The run as text for a terminal: conditions first, then quality, separation, speed, the
// index, the deployment, the files named as media that are not, what was skipped and,
// with --compare, the differences. Every
// string from the corpus (paths, decoder messages) goes through visible() first.
import type { Comparison } from './compare.js';
import type { BenchResult } from './run.js';
import { fixed, percent, table, visible } from './text.js';

const ms = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x < 1 ? `${x.toFixed(3)} ms` : `${x.toFixed(1)} ms`);
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const signed = (x: number, digits = 1) => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;

export function conditionsText(r: BenchResult): string {
  const c = r.conditions;
  const v = c.versions;
  const source = c.corpus.source === 'built-in sample' ? 'the built-in sample' : c.corpus.source.map(visible).join(', ');
  const found = r.peers.filter((p) => p.found).map((p) => `${p.name} ${visible(p.detail)}`);
  const missing = r.peers.filter((p) => !p.found).map((p) => `${p.name} missing (${visible(p.detail)})`);
  return [
    `provenant bench: suite ${c.suite.name} v${c.suite.version}, seed ${c.seed}, ${c.date}`,
    `machine: ${visible(c.machine.cpu)}, ${c.machine.cores} cores, ${c.machine.memoryGb} GB, ${c.machine.platform} ${c.machine.kernel}; ${c.workers} workers`,
    `versions: provenant ${v.provenant}, node ${v.node}, sharp ${v.sharp} (libvips ${v.libvips}), ffmpeg ${visible(v.ffmpeg)}, wasm ${v.wasm}`,
    `corpus: ${source}: ${c.corpus.originals.image} images, ${c.corpus.originals.audio} audio, ${c.corpus.originals.video} video` +
      ` (${c.corpus.mediaFound} media files found${c.corpus.limit === null ? '' : `, --limit ${c.corpus.limit}`}, ${c.corpus.duplicates} duplicates, ${c.corpus.otherFiles} other files, ${c.corpus.junk} named as media but not, ${c.corpus.skipped} skipped)`,
    `peers: ${[...found, ...missing].join('; ') || 'none'}`,
  ].join('\n');
}

export function resultText(r: BenchResult, comparison: Comparison | null): string {
  const out: string[] = [conditionsText(r)];
  for (const q of r.quality) {
    const rules = q.rules.map((x) => x.name);
    const rows = q.transforms.map((t) => [t.transform, String(t.variants) + (t.notMade > 0 ? ` (+${t.notMade} not made)` : ''), ...rules.map((n) => percent(t.matched[n])), fixed(t.meanScore, 1)]);
    rows.push(['all', String(q.transforms.reduce((n, t) => n + t.variants, 0)), ...rules.map((n) => percent(q.overall[n])), '']);
    out.push(`\n${q.hash} (${q.origin === 'peer' ? 'peer' : 'provenant'}, ${q.kind}): share of variants matched, of ${q.originals} originals`);
    out.push(table(['transform', 'variants', ...rules, 'mean score'], rows));
  }
  if (r.quality.length > 0) {
    out.push('\nFalse matches among distinct originals, ROC');
    out.push(table(
      ['hash', 'pairs', 'false matches (per rule)', 'AUC', `threshold at ${percent(r.conditions.targetFalseMatchRate)}`, 'recall there'],
      r.quality.map((q) => [
        q.hash,
        `${int(q.falseMatches.pairs)}${q.falseMatches.sampled ? ` sampled of ${int(q.falseMatches.possible)}` : ''}`,
        Object.entries(q.falseMatches.rate).map(([k, v]) => `${k} ${percent(v, 3)}`).join(', '),
        fixed(q.roc?.auc, 4),
        q.atTargetRate === null ? '-' : `score >= ${q.atTargetRate.threshold}`,
        percent(q.atTargetRate?.tpr),
      ]),
    ));
  }
  if (r.speed.length > 0) {
    out.push('\nSpeed: files per second (decode and hash, the pool) against the same files decoded only');
    out.push(table(['type', 'files', 'not hashed', 'files/s', 'decode only', 'of decode'], r.speed.map((s) => [s.kind, String(s.files), String(s.failed), fixed(s.filesPerSecond, 1), fixed(s.floor?.filesPerSecond, 1), s.ofFloor === null ? '-' : `${s.ofFloor.toFixed(2)}x`])));
    if (r.peerSpeed.length > 0) out.push(table(['peer', 'files', 'files/s'], r.peerSpeed.map((p) => [p.name, String(p.files), fixed(p.filesPerSecond, 1)])));
  }
  if (r.index.length > 0) {
    out.push('\nMatch index: verify-file queries (threshold 60, limit 100)');
    out.push(table(['hash', 'stored', 'queries', 'p50', 'p99', 'bytes/fingerprint', 'original found'], r.index.map((i) => [i.hashType, int(i.stored), int(i.queries), ms(i.p50Ms), ms(i.p99Ms), fixed(i.bytesPerFingerprint, 1), percent(i.foundOriginal)])));
  }
  if (r.server !== null) {
    out.push(`\nDeployment ${visible(r.server.url)}: ${r.server.concurrency} in flight, ${r.server.durationS} s per endpoint`);
    out.push(table(['endpoint', 'requests', 'req/s', 'p50', 'p99', 'max', 'errors'], r.server.endpoints.map((e) => [
      e.endpoint, int(e.requests), fixed(e.rps, 1), ms(e.p50Ms), ms(e.p99Ms), ms(e.maxMs),
      Object.entries(e.errors).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none',
    ])));
  }
  if (r.junk.length > 0) {
    // every one: each is a file the user believes is a picture, a song or a clip
    out.push(`\nNamed as media but not (${r.junk.length}):`);
    for (const j of r.junk) out.push(`  ${visible(j.path)}: ${visible(j.reason)}`);
  }
  if (r.skipped.length > 0) {
    out.push(`\nSkipped (${r.skipped.length}):`);
    for (const s of r.skipped.slice(0, 20)) out.push(`  ${visible(s.path)}: ${visible(s.reason)}`);
    if (r.skipped.length > 20) out.push(`  ... ${r.skipped.length - 20} more (--json lists every one)`);
  }
  if (comparison !== null) out.push(`\n${comparisonText(comparison)}`);
  return `${out.join('\n')}\n`;
}

export function comparisonText(c: Comparison): string {
  const out = [`Compared with the run of ${visible(c.old.date)} (suite ${visible(c.old.suite)}, seed ${c.old.seed})`];
  for (const w of c.warnings) out.push(`warning: ${w}`);
  const changed = c.recall.filter((d) => d.change !== 0);
  out.push(changed.length === 0 ? `recall: no change in ${c.recall.length} figures` : table(['recall', 'old', 'new', 'change (points)'], changed.map((d) => [d.what, percent(d.old), percent(d.new), signed(100 * d.change)])));
  if (c.separation.length > 0) out.push(table(['separation', 'old', 'new', 'change'], c.separation.map((d) => [d.what, d.what.endsWith('AUC') ? fixed(d.old, 4) : percent(d.old, 3), d.what.endsWith('AUC') ? fixed(d.new, 4) : percent(d.new, 3), d.what.endsWith('AUC') ? signed(d.change, 4) : `${signed(100 * d.change, 3)} points`])));
  if (c.speed.length > 0) out.push(table(['speed', 'old', 'new', 'new / old'], c.speed.map((d) => [d.what, fixed(d.old, 3), fixed(d.new, 3), d.ratio === null ? '-' : `${d.ratio.toFixed(2)}x`])));
  return out.join('\n');
}
