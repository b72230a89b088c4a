// `provenant bench [DIR...]`: how well and how fast matching works on your own media
// (and, with --server, on your own deployment). Without DIR, a small built-in sample made
// on the fly. docs/bench-command.md says what each figure means.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Command } from '../command.js';
import { USAGE_ERROR, UsageError } from '../usage.js';
import { compareResults, parseResult } from './compare.js';
import { reportHtml } from './html.js';
import { resultText } from './output.js';
import { terminalProgress } from './progress.js';
import { runBench, type BenchOptions } from './run.js';
import { LATEST_SUITE, SUITE_VERSIONS, type SuiteVersion } from './suite.js';
import { workersFromEnv } from '../../pool/index.js';
import { terminalJson } from '../../lib/terminal-text.js';
import { visible } from './text.js';

const USAGE = `usage: provenant bench [DIR...] [options]
  Measures matching on the images, audio and video under DIR (found by content; without
  DIR, a small built-in sample made on the fly): which edits of each file still match
  (the variant suite), how often distinct files are confused, hashing speed, match-index
  query times and, with --server, a deployment under load.
options:
  --limit N            use N originals at most (chosen at random from the seed)
  --seed N             seed of every random choice (default 1)
  --suite VERSION      the variant suite's version: 2 (default; issue 32's edits added) or 1
  --index-size N       fingerprints stored when timing match-index queries (default 100000)
  --max-pairs N        distinct-original pairs compared at most per hash; more are sampled (default 2000000)
  --workers N          worker threads (default $PROVENANT_WORKERS, else the number of CPUs)
  --min-time SECONDS   each speed figure repeats a small set until it has run this long (default 2)
  --server URL         also load this deployment: verify-file, verify-fuzzy, GET /verify
  --concurrency C      requests in flight with --server (default 4)
  --duration SECONDS   per endpoint with --server (default 10)
  --max-requests N     per endpoint with --server, at most (default: no cap but the duration)
  --json               every figure as JSON on stdout, instead of the tables
  --report FILE        also write a self-contained HTML report with plots
  --compare OLD.json   the differences from an earlier run's --json output
`;

const OPTIONS = {
  limit: { type: 'string' },
  seed: { type: 'string' },
  suite: { type: 'string' },
  'index-size': { type: 'string' },
  'max-pairs': { type: 'string' },
  workers: { type: 'string' },
  'min-time': { type: 'string' },
  server: { type: 'string' },
  concurrency: { type: 'string' },
  duration: { type: 'string' },
  'max-requests': { type: 'string' },
  json: { type: 'boolean' },
  report: { type: 'string' },
  compare: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function integer(name: string, value: string | undefined, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not "${value}"`);
  return n;
}

function defaultWorkers(): number {
  return workersFromEnv();
}

export const run: Command = async (args) => {
  let options: BenchOptions;
  let json: boolean;
  let report: string | undefined;
  let compare: string | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (positionals.includes('-')) throw new UsageError('DIR must be a path (standard input is not read)');
    const withServer = values.server !== undefined;
    for (const flag of ['concurrency', 'duration', 'max-requests'] as const) {
      if (values[flag] !== undefined && !withServer) throw new UsageError(`--${flag} goes with --server`);
    }
    const duration = values.duration === undefined ? 10 : Number(values.duration);
    if (!(duration > 0 && duration <= 3600)) throw new UsageError(`--duration must be a number of seconds from 0 to 3600, not "${values.duration}"`);
    const minTime = values['min-time'] === undefined ? 2 : Number(values['min-time']);
    if (!(minTime >= 0 && minTime <= 600)) throw new UsageError(`--min-time must be a number of seconds from 0 to 600, not "${values['min-time']}"`);
    if (withServer && !/^https?:\/\//i.test(values.server!)) throw new UsageError(`--server must be an http:// or https:// URL, not "${visible(values.server!)}"`);
    json = values.json === true;
    report = values.report;
    compare = values.compare;
    options = {
      dirs: positionals,
      limit: values.limit === undefined ? null : integer('limit', values.limit, 1, 10_000_000, 0),
      seed: integer('seed', values.seed, 0, 0xffffffff, 1),
      suite: integer('suite', values.suite, SUITE_VERSIONS[0], SUITE_VERSIONS[SUITE_VERSIONS.length - 1], LATEST_SUITE) as SuiteVersion,
      indexSize: integer('index-size', values['index-size'], 0, 50_000_000, 100_000),
      maxPairs: integer('max-pairs', values['max-pairs'], 1, 100_000_000, 2_000_000),
      workers: integer('workers', values.workers, 1, 256, defaultWorkers()),
      server: values.server ?? null,
      concurrency: integer('concurrency', values.concurrency, 1, 1024, 4),
      durationMs: Math.round(duration * 1000),
      maxRequests: values['max-requests'] === undefined ? null : integer('max-requests', values['max-requests'], 1, 100_000_000, 0),
      minTimeS: minTime,
      progress: terminalProgress(),
    };
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`provenant bench: ${e.message}\n${USAGE}`);
    return USAGE_ERROR;
  }

  // the earlier run is read first: a bad --compare file fails before the work
  let old = null;
  if (compare !== undefined) {
    try {
      old = parseResult(await readFile(compare, 'utf8'), compare);
    } catch (e) {
      process.stderr.write(`provenant bench: cannot use --compare ${visible(compare)}: ${visible((e as Error).message)}\n`);
      return 1;
    }
  }
  const result = await runBench(options);
  const comparison = old === null ? null : compareResults(old, result);
  if (report !== undefined) {
    await writeFile(report, reportHtml(result, comparison));
    process.stderr.write(`provenant bench: report written to ${visible(report)}\n`);
  }
  // JSON as the other commands print it for a terminal: the corpus's names may hold control characters
  process.stdout.write(json ? `${terminalJson(comparison === null ? result : { ...result, comparison })}\n` : resultText(result, comparison));
  return 0;
};
