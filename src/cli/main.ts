#!/usr/bin/env node
// `provenant <command> ...`: one line per command in COMMANDS; each command lives in
// its own file under src/cli/ and is loaded only when it runs.
export type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<{ run: Command }>> = {
  fingerprint: () => import('./fingerprint.js'),
  integrity: () => import('./integrity.js'),
  serve: () => import('./serve.js'),
  sha256: () => import('./sha256.js'),
  admin: () => import('./admin.js'),
};

const USAGE = `usage: provenant <command> [options]\ncommands: ${Object.keys(COMMANDS).sort().join(', ')}`;

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 1 : 0;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (load === undefined) {
    process.stderr.write(`provenant: unknown command "${name}"\n${USAGE}\n`);
    return 1;
  }
  return (await load()).run(args);
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    process.stderr.write(`provenant: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
