// `provenant witness <serve|key>`: a transparency-log witness (c2sp.org/tlog-witness),
// src/lib/tlog/witness.ts's rules over HTTP with its key and state in a data directory
// (src/lib/tlog/witness-server.ts). A failure is one line on stderr and exit 1; a wrong
// command line, its usage and exit 2.
import { parseArgs } from 'node:util';
import { visible, visibleLines } from '../lib/terminal-text.js';
import { TlogError } from '../lib/tlog/errors.js';
import { parseVerifierKey, SIG_ED25519 } from '../lib/tlog/note.js';
import { loadOrCreateWitnessKey, startWitness, WITNESS_CLIENT_RATE, WitnessSetupError } from '../lib/tlog/witness-server.js';
import type { Command } from './command.js';
import { USAGE_ERROR, UsageError } from './usage.js';

const SERVE_USAGE = `usage: provenant witness serve --port N --data-dir DIR --name NAME --log VKEY [--log VKEY ...] [--host ADDR] [--client-rate R]
  cosigns the checkpoints of the logs whose verifier keys are given (a key's name is its
  log's origin): POST http://ADDR:N/add-checkpoint; GET http://ADDR:N/<sha256 of origin>/checkpoint
  answers the latest cosigned one. ADDR defaults to 127.0.0.1 (--host 0.0.0.0 to take
  submissions from other machines). The key is made in DIR on first start (0600); the
  latest cosigned checkpoint of each log is kept in DIR. One process per DIR.
  Each submitting address (an IPv6 one's /64) may send R add-checkpoint requests a second
  on average, 5 seconds' worth at once (default ${WITNESS_CLIENT_RATE}); beyond, 429 with Retry-After.
`;
const KEY_USAGE = `usage: provenant witness key --data-dir DIR
  prints the witness's cosignature verifier key (type 0x04), for the logs' configuration
`;
const USAGE = `usage: provenant witness <serve|key> [options]   (provenant witness <command> --help for its own)
${[SERVE_USAGE, KEY_USAGE].map((u) => u.replace(/^usage: provenant witness /, '  ').replace(/\n {2}(?=\S)/g, '\n      ')).join('')}`;

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        port: { type: 'string' }, 'data-dir': { type: 'string' }, name: { type: 'string' }, log: { type: 'string', multiple: true },
        host: { type: 'string' }, 'client-rate': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function dataDir(values: ReturnType<typeof parse>): string {
  if (!values['data-dir']) throw new UsageError('--data-dir DIR is required');
  return values['data-dir'];
}

async function serve(args: string[]): Promise<number> {
  const values = parse(args);
  const dir = dataDir(values);
  if (!values.name) throw new UsageError('--name NAME is required');
  if (!/^(0|[1-9][0-9]{0,4})$/.test(values.port ?? '') || Number(values.port) > 65535) throw new UsageError('--port N (0..65535) is required');
  const logs = values.log ?? [];
  if (logs.length === 0) throw new UsageError('at least one --log VKEY is required');
  for (const vkey of logs) {
    let key;
    try {
      key = parseVerifierKey(vkey);
    } catch (e) {
      throw new UsageError(`--log ${vkey}: ${(e as Error).message}`);
    }
    if (key.type !== SIG_ED25519) throw new UsageError(`--log ${vkey}: a log key is an Ed25519 (type 0x01) verifier key`);
  }
  const rate = values['client-rate'] ?? String(WITNESS_CLIENT_RATE);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(rate) || !(Number(rate) > 0) || Number(rate) > 1e6) throw new UsageError('--client-rate R is a positive number of requests a second');
  const running = await startWitness({ dir, name: values.name, logs, port: Number(values.port), host: values.host ?? '127.0.0.1', clientRate: Number(rate) });
  process.stdout.write(`${visibleLines([
    `witness ${running.witness.name} listening on ${running.url}`,
    `verifier key ${running.verifierKey}`,
    `logs: ${running.witness.origins.join(', ')}; Ctrl-C stops`,
  ])}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return 0;
}

async function key(args: string[]): Promise<number> {
  const values = parse(args);
  const dir = dataDir(values);
  if (values.name !== undefined || values.log !== undefined || values.port !== undefined || values.host !== undefined || values['client-rate'] !== undefined) throw new UsageError('witness key takes --data-dir only');
  process.stdout.write(`${visible(loadOrCreateWitnessKey(dir).verifierKey)}\n`);
  return 0;
}

const SUBCOMMANDS: Record<string, { run: (args: string[]) => Promise<number>; usage: string }> = {
  serve: { run: serve, usage: SERVE_USAGE },
  key: { run: key, usage: KEY_USAGE },
};

export const run: Command = async (args) => {
  const [name, ...rest] = args;
  if (name === undefined) {
    process.stderr.write(`provenant witness: no command given\n${USAGE}`);
    return USAGE_ERROR;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (name === '--help' || name === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(subcommand?.usage ?? USAGE);
    return 0;
  }
  try {
    if (subcommand === undefined) throw new UsageError(`unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"`);
    return await subcommand.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${visible(`provenant witness ${name}: ${err.message}`)}\n${subcommand?.usage ?? USAGE}`);
      return USAGE_ERROR;
    }
    if (err instanceof WitnessSetupError || err instanceof TlogError || (err as NodeJS.ErrnoException).code !== undefined) {
      process.stderr.write(`${visible(`provenant witness ${name}: ${(err as Error).message}`)}\n`);
      return 1;
    }
    throw err;
  }
};
