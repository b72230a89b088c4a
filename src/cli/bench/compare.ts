// `--compare old.json`: the differences between an earlier run's figures and this run's,
// matched by hash, transform, rule, media type and endpoint; what one run has and the
// other lacks is left out. Runs of another suite version or seed are compared all the
// same, with a warning (their variants differ).
import type { BenchResult } from './run.js';

export interface Delta {
  what: string;
  old: number;
  new: number;
  /** new - old (shares: in percentage points x 0.01). */
  change: number;
}

export interface Comparison {
  old: { date: string; suite: string; seed: number; originals: Record<string, number> };
  warnings: string[];
  /** Recall per hash, transform and rule (shares 0-1). */
  recall: Delta[];
  /** False-match rate per hash and rule, and AUC per hash. */
  separation: Delta[];
  /** Files per second per type, index and server latencies and throughput (ratios new / old in `change`... see `ratio`). */
  speed: (Delta & { ratio: number | null })[];
}

export function parseResult(text: string, source: string): BenchResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source} is not JSON: ${(e as Error).message}`);
  }
  const r = value as Partial<BenchResult>;
  if (r === null || typeof r !== 'object' || r.tool !== 'provenant bench' || r.format !== 1 || !Array.isArray(r.quality) || typeof r.conditions !== 'object') {
    throw new Error(`${source} is not the --json output of provenant bench`);
  }
  return r as BenchResult;
}

const delta = (what: string, o: number | null | undefined, n: number | null | undefined): Delta | null =>
  typeof o === 'number' && typeof n === 'number' ? { what, old: o, new: n, change: n - o } : null;

export function compareResults(old: BenchResult, now: BenchResult): Comparison {
  const warnings: string[] = [];
  const os = old.conditions.suite;
  const ns = now.conditions.suite;
  if (os.name !== ns.name || os.version !== ns.version) warnings.push(`the old run used suite ${os.name} v${os.version}, this one ${ns.name} v${ns.version}: variants differ`);
  if (old.conditions.seed !== now.conditions.seed) warnings.push(`the old run's seed was ${old.conditions.seed}, this one's ${now.conditions.seed}: placements and samples differ`);
  if (JSON.stringify(old.conditions.corpus.source) !== JSON.stringify(now.conditions.corpus.source)) warnings.push('the corpora differ');
  const recall: Delta[] = [];
  const separation: Delta[] = [];
  for (const q of now.quality) {
    const p = old.quality.find((x) => x.hash === q.hash);
    if (p === undefined) continue;
    for (const t of q.transforms) {
      const pt = p.transforms.find((x) => x.transform === t.transform);
      if (pt === undefined) continue;
      for (const rule of Object.keys(t.matched)) {
        const d = delta(`${q.hash} ${t.transform} ${rule}`, pt.matched[rule], t.matched[rule]);
        if (d) recall.push(d);
      }
    }
    for (const rule of Object.keys(q.falseMatches.rate)) {
      const d = delta(`${q.hash} false matches ${rule}`, p.falseMatches.rate[rule], q.falseMatches.rate[rule]);
      if (d) separation.push(d);
    }
    const auc = delta(`${q.hash} AUC`, p.roc?.auc, q.roc?.auc);
    if (auc) separation.push(auc);
  }
  const speed: Comparison['speed'] = [];
  const withRatio = (d: Delta | null) => {
    if (d) speed.push({ ...d, ratio: d.old === 0 ? null : d.new / d.old });
  };
  for (const s of now.speed) withRatio(delta(`${s.kind} files/s`, old.speed.find((x) => x.kind === s.kind)?.filesPerSecond, s.filesPerSecond));
  for (const i of now.index) {
    const p = old.index.find((x) => x.hashType === i.hashType && x.stored === i.stored);
    withRatio(delta(`${i.hashType} index p50 ms (${i.stored} stored)`, p?.p50Ms, i.p50Ms));
    withRatio(delta(`${i.hashType} index p99 ms (${i.stored} stored)`, p?.p99Ms, i.p99Ms));
  }
  for (const e of now.server?.endpoints ?? []) {
    const p = old.server?.endpoints.find((x) => x.endpoint === e.endpoint);
    withRatio(delta(`${e.endpoint} req/s`, p?.rps, e.rps));
    withRatio(delta(`${e.endpoint} p99 ms`, p?.p99Ms, e.p99Ms));
  }
  return {
    old: { date: old.conditions.date, suite: `${os.name} v${os.version}`, seed: old.conditions.seed, originals: old.conditions.corpus.originals },
    warnings,
    recall,
    separation,
    speed,
  };
}
