// The rules every command and subcommand of the compiled CLI (the package's bin,
// dist/src/cli/main.js) keeps, one table over all of them: --help prints its own
// usage on stdout and exits 0; an unknown flag is named and exits 2 (every usage
// error exits 2); a path that is a directory or unreadable says so.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledFile, packageRoot } from '../../src/lib/wasm.js';
import { withoutFileOverride } from '../helpers/unprivileged.js';

const test = suite('cli/usage');
const MAIN = compiledFile('src/cli/main.js');
let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-usage-'));
  chmodSync(dir, 0o755); // the unreadable-file case may run as the checkout's owner (withoutFileOverride)
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Run { status: number | null; stdout: string; stderr: string }
/** Runs the CLI with `args`, through the command `via` when given (e.g. setpriv and its options). */
function cli(args: string[], options: SpawnSyncOptions = {}, via: string[] = []): Run {
  // a data directory of its own, so that nothing here touches ./data
  const env = { ...process.env, PROVENANT_DATA_DIR: join(dir, 'default-data'), PROVENANT_LOG_LEVEL: 'silent' };
  const [command, ...rest] = [...via, process.execPath, MAIN, ...args];
  const r = spawnSync(command, rest, { cwd: dir, env, encoding: 'utf8', timeout: 60_000, ...options });
  return { status: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}
const show = (args: string[], r: Run) => `provenant ${args.join(' ')} -> ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

// Every command and subcommand, as typed before its flags.
const COMMANDS: string[][] = [
  ['serve'],
  ['bench'],
  ['fingerprint'],
  ['integrity'],
  ['sha256'],
  ['witness'],
  ['witness', 'serve'],
  ['witness', 'key'],
  ['iscc'],
  ['admin'],
  ['admin', 'create-user'],
  ['admin', 'create-org'],
  ['admin', 'create-app'],
  ['admin', 'set-tier'],
  ['admin', 'session-token'],
];

test('--help and -h: the command\'s own usage on stdout, exit 0, nothing started or created', () => {
  const dataDir = join(dir, 'help-data');
  for (const command of COMMANDS) {
    // -h everywhere too would double the spawns: the first command and admin's first subcommand stand for it
    for (const help of command === COMMANDS[0] || command === COMMANDS[5] ? ['--help', '-h'] : ['--help']) {
      const args = [...command, help, ...(command[0] === 'admin' ? ['--data-dir', dataDir] : [])];
      const r = cli(args);
      assert.is(r.status, 0, show(args, r));
      assert.is(r.stderr, '', show(args, r));
      assert.ok(r.stdout.startsWith(`usage: provenant ${command.join(' ')} `), show(args, r));
    }
  }
  assert.not.ok(existsSync(dataDir), 'no data directory made by --help');
  // a subcommand's usage is its own, not the whole admin list
  assert.not.match(cli(['admin', 'set-tier', '--help']).stdout, 'create-user');
});

test('an unknown flag is named on stderr, exit 2, nothing on stdout', () => {
  for (const command of COMMANDS) {
    const args = [...command, '--frobnicate'];
    const r = cli(args);
    assert.is(r.status, 2, show(args, r));
    assert.is(r.stdout, '', show(args, r));
    assert.match(r.stderr, '--frobnicate', show(args, r));
    assert.match(r.stderr, 'usage: provenant', show(args, r));
  }
  // a flag of another admin subcommand is unknown to this one
  const r = cli(['admin', 'set-tier', '--password', 'x', '--user', 'a@example.com', '--tier', 'free']);
  assert.is(r.status, 2, show(['admin', 'set-tier', '--password'], r));
  assert.match(r.stderr, '--password');
});

test('provenant itself: --help/-h/help exit 0 listing every command; --version/-v print package.json\'s version', () => {
  for (const help of ['--help', '-h', 'help']) {
    const r = cli([help]);
    assert.is(r.status, 0, show([help], r));
    assert.match(r.stdout, /^usage: provenant /);
    for (const [name] of COMMANDS) assert.match(r.stdout, name);
  }
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = cli([flag]);
    assert.is(r.status, 0, show([flag], r));
    assert.is(r.stdout, `${version}\n`);
  }
});

test('usage errors exit 2 everywhere: no command, an unknown command or flag, missing or extra arguments, a bad flag value', () => {
  const cases: [string[], string | RegExp][] = [
    [[], 'usage: provenant'],
    [['frobnicate'], 'frobnicate'],
    [['--frobnicate'], '--frobnicate'],
    [['sha256'], 'FILE'],
    [['integrity', 'a', 'b'], 'FILE'],
    [['fingerprint', '-'], 'FILE'],
    [['serve', 'extra'], 'extra'],
    [['admin'], 'usage: provenant admin'],
    [['admin', 'frobnicate'], 'frobnicate'],
    [['admin', 'create-user', 'extra', '--email', 'a@example.com'], 'extra'],
    [['admin', 'create-user', '--password', 'long enough pw'], '--email'],
    [['admin', 'create-user', '--email', 'a@example.com'], '--password'],
    [['admin', 'create-user', '--email', 'not-an-email', '--password', 'long enough pw'], '--email'],
    [['admin', 'create-user', '--email', 'a@example.com', '--password', 'long enough pw', '--tier', 'gold'], '--tier'],
    [['admin', 'create-org', '--name', 'N', '--owner', 'a@example.com'], '--tier'],
    [['admin', 'create-org', '--name', 'N', '--owner', 'a@example.com', '--tier', 'pro', '--limit', '-1'], '--limit'],
    [['admin', 'create-app', '--owner', 'a@example.com', '--name', 'N'], '--scopes'],
    [['admin', 'set-tier', '--tier', 'pro'], '--user'],
    [['admin', 'set-tier', '--user', 'a@example.com', '--org', 'o', '--tier', 'pro'], '--user'],
    [['admin', 'session-token'], '--email'],
  ];
  const dataDir = join(dir, 'usage-data');
  for (const [args, named] of cases) {
    const full = args[0] === 'admin' ? [...args, '--data-dir', dataDir] : args;
    const r = cli(full);
    assert.is(r.status, 2, show(full, r));
    assert.is(r.stdout, '', show(full, r));
    assert.match(r.stderr, named, show(full, r));
  }
  assert.not.ok(existsSync(dataDir), 'a usage error creates no database');
});

test('file commands: a missing path, a directory and an unreadable file each say so, exit 1', () => {
  const unreadable = join(dir, 'secret.bin');
  writeFileSync(unreadable, 'x');
  chmodSync(unreadable, 0o000);
  // not as nobody, who cannot enter a private checkout: test/helpers/unprivileged.ts
  const unprivileged = withoutFileOverride();
  for (const name of ['fingerprint', 'integrity', 'iscc', 'sha256']) {
    const cases: [string, string, SpawnSyncOptions, string[]][] = [
      [join(dir, 'no-such-file'), 'no such file', {}, []],
      [dir, 'is a directory', {}, []],
      [unreadable, 'permission denied', unprivileged.options, unprivileged.via],
    ];
    for (const [path, says, options, via] of cases) {
      const r = cli([name, path], options, via);
      assert.is(r.status, 1, show([name, path], r));
      assert.is(r.stdout, '', show([name, path], r));
      assert.match(r.stderr.toLowerCase(), says, show([name, path], r));
      assert.match(r.stderr, path, show([name, path], r));
    }
  }
});

test('admin on a data directory without a database says so and creates nothing; create-user creates it and says so', () => {
  const dataDir = join(dir, 'empty-data');
  for (const args of [
    ['session-token', '--email', 'a@example.com'],
    ['set-tier', '--user', 'a@example.com', '--tier', 'premium'],
    ['create-org', '--name', 'N', '--owner', 'a@example.com', '--tier', 'pro'],
    ['create-app', '--owner', 'a@example.com', '--name', 'N', '--redirect-uri', 'https://a.example.com/cb', '--scopes', 'openid'],
  ]) {
    const full = ['admin', ...args, '--data-dir', dataDir];
    const r = cli(full);
    assert.is(r.status, 1, show(full, r));
    assert.is(r.stdout, '', show(full, r));
    assert.match(r.stderr, `no database at ${join(dataDir, 'provenant.db')}`, show(full, r));
    assert.match(r.stderr, 'create-user', show(full, r));
    assert.not.ok(existsSync(dataDir), 'nothing created');
  }
  const full = ['admin', 'create-user', '--email', 'first@example.com', '--password', 'long enough pw', '--data-dir', dataDir];
  const first = cli(full);
  assert.is(first.status, 0, show(full, first));
  assert.match(first.stderr, `created a new database at ${join(dataDir, 'provenant.db')}`);
  assert.ok(JSON.parse(first.stdout).user_id);
  assert.ok(existsSync(join(dataDir, 'provenant.db')));
  const again = ['admin', 'create-user', '--email', 'second@example.com', '--password', 'long enough pw', '--data-dir', dataDir];
  const second = cli(again);
  assert.is(second.status, 0, show(again, second));
  assert.is(second.stderr, '', 'said only when it created one');
  const token = cli(['admin', 'session-token', '--email', 'first@example.com', '--data-dir', dataDir]);
  assert.is(token.status, 0, show(['admin', 'session-token'], token));
});

test.run();
