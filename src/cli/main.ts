#!/usr/bin/env node
// `provenant <command> ...`: one line per command in COMMANDS; each command lives in
// its own file under src/cli/ and is loaded only when it runs. `serve` and `admin` live
// in the server package (@provenant/server, the server/ workspace), which this library
// does not depend on: they load from it when it is installed. Every command answers
// --help with its own usage on stdout (exit 0), and a usage error as usage.ts says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { visible } from '../lib/terminal-text.js';
import { packageRoot } from '../lib/wasm.js';
import type { Command } from './command.js';
import { USAGE_ERROR } from './usage.js';

const SERVER_PACKAGE = '@provenant/server';

/** A command of the server package, or one that says how to install it (exit 1). */
async function serverCommand(name: string): Promise<{ run: Command }> {
  const specifier = `${SERVER_PACKAGE}/cli/${name}`;
  try {
    // resolved first, so that only the package's absence reads as "not installed"
    import.meta.resolve(specifier);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !(err as Error).message.includes(`'${SERVER_PACKAGE}'`)) throw err;
    return {
      run: async () => {
        process.stderr.write(`provenant ${name} needs ${SERVER_PACKAGE}: npm install ${SERVER_PACKAGE}\n`);
        return 1;
      },
    };
  }
  return (await import(specifier)) as { run: Command };
}

const COMMANDS: Record<string, () => Promise<{ run: Command }>> = {
  bench: () => import('./bench/index.js'),
  c2pa: () => import('./c2pa.js'),
  fingerprint: () => import('./fingerprint.js'),
  integrity: () => import('./integrity.js'),
  iscc: () => import('./iscc.js'),
  log: () => import('./log.js'),
  serve: () => serverCommand('serve'),
  sha256: () => import('./sha256.js'),
  vault: () => import('./vault.js'),
  verify: () => import('./verify.js'),
  witness: () => import('./witness.js'),
  admin: () => serverCommand('admin'),
};

const USAGE = `usage: provenant <command> [options]   (provenant <command> --help for its own)
       provenant --version
commands: ${Object.keys(COMMANDS).sort().join(', ')}
`;

function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const load = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (load === undefined) {
    const what = name === undefined ? 'no command given' : `unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"`;
    process.stderr.write(`${visible(`provenant: ${what}`)}\n${USAGE}`);
    return USAGE_ERROR;
  }
  return (await load()).run(args);
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    process.stderr.write(`${visible(`provenant: ${e instanceof Error ? e.message : String(e)}`)}\n`);
    process.exitCode = 1;
  },
);
