// `provenant iscc FILE [--json]` run as a process, against the library's isccOfFile.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isccOfFile } from '../../src/media/iscc.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

test('--json prints what isccOfFile gives; the plain form leads with the ISCC-CODE', async () => {
  for (const file of ['test/fixtures/media/fruits.jpg', 'test/fixtures/media/vtest.avi', 'test/fixtures/audio/machine-wars-6s.wav']) {
    const want = await isccOfFile(join(ROOT, file));
    const json = cli('iscc', file, '--json');
    assert.is(json.status, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout), { file, ...want });
    const plain = cli('iscc', file);
    assert.is(plain.status, 0, plain.stderr);
    const lines = plain.stdout.trimEnd().split('\n');
    assert.is(lines[0], `${want.iscc}  ${file}`);
    assert.is(lines[1], `  content   ${want.content!.code}  (${want.content!.kind})`);
    assert.ok(lines.includes(`  datahash  ${want.datahash}`));
  }
});

test('a file without a Content-Code gets the ISCC-SUM; a name with control characters is printed escaped', () => {
  const dir = tempDir('provenant-cli-iscc-');
  const file = join(dir, 'odd\u001b[31mname.bin');
  writeFileSync(file, new Uint8Array([0, 1, 2, 3, 0, 255]));
  const plain = cli('iscc', file);
  assert.is(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /^ISCC:KU/);
  assert.match(plain.stdout, /content {3}none/);
  assert.not.ok(plain.stdout.includes('\u001b'), 'the escape character reached the terminal');
});

test('a missing file exits 1 naming it; no file or two are usage errors (exit 2); --help exits 0', () => {
  const missing = cli('iscc', '/no/such/file.jpg');
  assert.is(missing.status, 1);
  assert.match(missing.stderr, /no such file: \/no\/such\/file.jpg/);
  assert.is(cli('iscc').status, 2);
  assert.is(cli('iscc', 'a', 'b').status, 2);
  assert.is(cli('iscc', 'x', '--bits').status, 2);
  const help = cli('iscc', '--help');
  assert.is(help.status, 0);
  assert.match(help.stdout, /usage: provenant iscc FILE \[--json\]/);
});

test.run();
