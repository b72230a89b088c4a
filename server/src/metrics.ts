// A tiny Prometheus registry (text exposition format 0.0.4): counters, histograms and
// gauges with labels. Gauges may take a `collect` callback read at scrape time, which
// is how other features publish pool queue depth or index sizes.

export type Labels = Record<string, string | number>;

export interface Counter {
  inc(labels?: Labels, value?: number): void;
}
export interface Histogram {
  observe(labels: Labels, value: number): void;
}
export interface Gauge {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, value?: number): void;
  dec(labels?: Labels, value?: number): void;
}
/** A scrape-time reading: one value, or one per label set. */
export type GaugeCollector = () => number | { labels: Labels; value: number }[];

export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(names: readonly string[], labels: Labels, extra?: [string, string]): string {
  const parts = names.map((n) => `${n}="${escapeLabel(String(labels[n] ?? ''))}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Label sets whose text is remembered per family (routes, methods and statuses repeat). */
const MEMOISED_LABEL_SETS = 1000;

/**
 * labelText(names, labels) remembered per combination of values (looked up through a
 * map per label, so a repeated set costs no string building); past
 * MEMOISED_LABEL_SETS combinations the rest are built each time.
 */
function labelKeyer(names: readonly string[]): (labels: Labels) => string {
  if (names.length === 0) return () => '';
  const root = new Map<string | number, unknown>();
  const last = names.length - 1;
  let memoised = 0;
  return (labels) => {
    let level = root;
    for (let i = 0; i < last; i++) {
      const value = labels[names[i]] ?? '';
      let next = level.get(value) as Map<string | number, unknown> | undefined;
      if (next === undefined) {
        if (memoised >= MEMOISED_LABEL_SETS) return labelText(names, labels);
        level.set(value, (next = new Map()));
      }
      level = next;
    }
    const value = labels[names[last]] ?? '';
    let text = level.get(value) as string | undefined;
    if (text === undefined) {
      text = labelText(names, labels);
      if (memoised < MEMOISED_LABEL_SETS) {
        level.set(value, text);
        memoised += 1;
      }
    }
    return text;
  };
}

function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

interface Family {
  render(): string;
}

export class Metrics {
  private readonly families = new Map<string, { kind: string; family: Family; handle: unknown }>();

  private register<T>(name: string, kind: string, make: () => { family: Family; handle: T }): T {
    if (!NAME.test(name)) throw new TypeError(`bad metric name ${name}`);
    const existing = this.families.get(name);
    if (existing) {
      if (existing.kind !== kind) throw new TypeError(`metric ${name} is already a ${existing.kind}`);
      return existing.handle as T;
    }
    const made = make();
    this.families.set(name, { kind, ...made });
    return made.handle;
  }

  /** A counter; registering the same name again returns the same counter. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(name, 'counter', () => {
      const values = new Map<string, { labels: Labels; value: number }>();
      const key = labelKeyer(labelNames);
      return {
        handle: {
          inc(labels: Labels = {}, value = 1) {
            const k = key(labels);
            const entry = values.get(k) ?? { labels, value: 0 };
            entry.value += value;
            values.set(k, entry);
          },
        },
        family: {
          render: () =>
            [`# HELP ${name} ${help}`, `# TYPE ${name} counter`, ...[...values].map(([k, e]) => `${name}${k} ${formatNumber(e.value)}`)].join('\n'),
        },
      };
    });
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets: readonly number[] = DEFAULT_BUCKETS): Histogram {
    return this.register(name, 'histogram', () => {
      const sorted = [...buckets].sort((a, b) => a - b);
      const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
      const key = labelKeyer(labelNames);
      return {
        handle: {
          observe(labels: Labels, value: number) {
            const k = key(labels);
            let s = series.get(k);
            if (!s) series.set(k, (s = { labels, counts: sorted.map(() => 0), sum: 0, count: 0 }));
            for (let i = 0; i < sorted.length; i++) if (value <= sorted[i]) s.counts[i] += 1;
            s.sum += value;
            s.count += 1;
          },
        },
        family: {
          render: () => {
            const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
            for (const s of series.values()) {
              sorted.forEach((b, i) => lines.push(`${name}_bucket${labelText(labelNames, s.labels, ['le', formatNumber(b)])} ${s.counts[i]}`));
              lines.push(`${name}_bucket${labelText(labelNames, s.labels, ['le', '+Inf'])} ${s.count}`);
              lines.push(`${name}_sum${labelText(labelNames, s.labels)} ${formatNumber(s.sum)}`);
              lines.push(`${name}_count${labelText(labelNames, s.labels)} ${s.count}`);
            }
            return lines.join('\n');
          },
        },
      };
    });
  }

  /** A gauge set by its owner, or read through `collect` at every scrape. */
  gauge(name: string, help: string, labelNames: readonly string[] = [], collect?: GaugeCollector): Gauge {
    return this.register(name, 'gauge', () => {
      const values = new Map<string, { labels: Labels; value: number }>();
      const key = labelKeyer(labelNames);
      const add = (labels: Labels, delta: number) => {
        const k = key(labels);
        const entry = values.get(k) ?? { labels, value: 0 };
        entry.value += delta;
        values.set(k, entry);
      };
      return {
        handle: {
          set: (labels: Labels, value: number) => void values.set(key(labels), { labels, value }),
          inc: (labels: Labels = {}, value = 1) => add(labels, value),
          dec: (labels: Labels = {}, value = 1) => add(labels, -value),
        },
        family: {
          render: () => {
            const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
            let readings: { labels: Labels; value: number }[] = [...values.values()];
            if (collect) {
              try {
                const r = collect();
                readings = typeof r === 'number' ? [{ labels: {}, value: r }] : r;
              } catch {
                readings = [];
              }
            }
            for (const e of readings) lines.push(`${name}${labelText(labelNames, e.labels)} ${formatNumber(e.value)}`);
            return lines.join('\n');
          },
        },
      };
    });
  }

  /** The whole registry in the Prometheus text format. */
  render(): string {
    return [...this.families.values()].map((f) => f.family.render()).join('\n') + '\n';
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
