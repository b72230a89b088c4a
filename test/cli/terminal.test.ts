// Others' strings on the user's terminal (issue 25 item 3): visible() and terminalJson()
// against the characters they must escape, then the printers that show others' text
// run as the user runs them: `vault serve`'s approval prompt for a request whose
// custom licence redraws the screen (ESC[6A...), and `provenant verify`'s table for a
// record with a hostile comment, custom licence and display name in a file whose
// Content Credentials name a hostile claim generator. Both outputs are compared byte
// by byte with what they must be.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSha256Hex } from '../../src/lib/digest.js';
import { terminalJson, visible, visibleLines } from '../../src/lib/terminal-text.js';
import { writeContentCredentials } from '../../src/media/c2pa-write.js';
import { requestVaultSignature } from '../../src/sdk/vault.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, PHOTO, startCli, vaultEnv, waitFor } from '../helpers/vault.js';
import { newSigner, sign } from '../public/support.js';

/** A line that moves the cursor up six lines, clears it and writes a forged request, then turns the rest of the line around. */
const REDRAW = '\x1b[6A\x1b[2KRequest 9 from https://bank.example\u202eexe.fdp\x9b31m\x7f';
const REDRAW_SHOWN = '\\x1b[6A\\x1b[2KRequest 9 from https://bank.example\\u202eexe.fdp\\x9b31m\\x7f';

/** Every character the terminal may act on: C0, DEL, C1, and the bidi controls. */
const UNSAFE_CODES = [
  ...Array.from({ length: 0x20 }, (_, i) => i), 0x7f, ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
  0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
];

/** Where `bytes` (UTF-8 output) holds one of those characters raw, or -1. */
function rawUnsafeAt(bytes: Buffer, allowNewline = true): number {
  const text = bytes.toString('utf8');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (allowNewline && c === 0x0a) continue;
    if (UNSAFE_CODES.includes(c)) return i;
  }
  return -1;
}

const unit = suite('terminal text');

unit('visible: each C0, DEL, C1 as \\xHH and each bidi control as \\uHHHH; nothing else changes', () => {
  for (const code of UNSAFE_CODES) {
    const expected = code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    assert.is(visible(`a${String.fromCharCode(code)}b`), `a${expected}b`, `U+${code.toString(16)}`);
  }
  assert.is(visible('\x1b'), '\\x1b');
  assert.is(visible('\u202e'), '\\u202e');
  for (const plain of ['café, 水, 🍓, ½ — “quoted”', 'C:\\Users\\ana\\photo.jpg', 'tab-free text', '\u00a0\u00ff\u0100\u200d\u2028']) {
    assert.is(visible(plain), plain);
  }
  assert.is(visible(REDRAW), REDRAW_SHOWN);
  assert.is(visibleLines(['one', 'two\nthree', '']), 'one\ntwo\\x0athree\n', 'a newline inside a line stays in it');
});

unit('terminalJson: the same value back through JSON.parse, with no raw control or bidi character', () => {
  const value = { all: String.fromCharCode(...UNSAFE_CODES), redraw: REDRAW, nested: [{ name: 'Eve\u202e' }], plain: 'café 水 🍓', n: 1, nothing: null };
  const json = terminalJson(value);
  assert.equal(JSON.parse(json), value);
  assert.is(rawUnsafeAt(Buffer.from(json), false), -1, json);
  assert.ok(json.includes('\\u009b') && json.includes('\\u202e') && json.includes('\\u007f'));
  assert.ok(json.includes('café 水 🍓'));
});

unit.run();

// ---------------------------------------------------------------- the printers

const printers = suite<{ server: TestServer }>('terminal: the CLI printers');
const children: ChildProcessWithoutNullStreams[] = [];
printers.before(async (ctx) => {
  ctx.server = await startTestServer();
});
printers.after(async ({ server }) => {
  for (const c of children) c.kill('SIGTERM');
  await server.close();
});

printers('vault serve: a request whose licence and comment carry escape sequences is shown escaped, byte for byte', async ({ server }) => {
  const env = vaultEnv(server.url);
  const init = await cli(['vault', 'init', '--json'], env);
  assert.is(init.status, 0, init.stderr);
  const agentKey = JSON.parse(init.stdout).agent_pub_key as string;
  const child = startCli(['vault', 'serve', '--port', '0'], env);
  children.push(child);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  const started = await waitFor(child.stdout, /on (http:\/\/127\.0\.0\.1:\d+)/);
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(started)![1];
  const before = Buffer.concat(chunks).length;

  const hash = 'cd'.repeat(32);
  const comment = 'looks fine\x1b]0;owned\x07\u2066\r\n  publish     yes';
  const prompt = waitFor(child.stdout, /\[y\/N\] $/);
  // declined below (or the vault stopped by after()): the answer is not what this test checks
  const answer = requestVaultSignature({ file_hash: hash, content_rights: { license: { custom: REDRAW } }, comment, signer: agentKey }, { vaultUrl: url }).catch(() => undefined);
  await prompt;
  const shown = Buffer.concat(chunks).subarray(before);
  const expected = [
    '',
    'Request 1 from a local app (no web origin)',
    `  file hash   ${hash}`,
    '  intent      Authorship; AI generation not declared',
    `  rights      license Custom "${REDRAW_SHOWN}"`,
    '  comment     "looks fine\\u001b]0;owned\\u0007\\u2066\\r\\n  publish     yes"',
    '  publish     no: the signed record goes back to the app unpublished',
    `Sign as ${agentKey}? [y/N] `,
  ].join('\n');
  assert.is(shown.toString('utf8'), expected);
  assert.ok(shown.equals(Buffer.from(expected, 'utf8')), 'the same bytes');
  assert.is(rawUnsafeAt(shown), -1, 'no raw control or bidi character');
  child.stdin.write('n\n');
  await answer;
});

printers('verify: comment, custom licence, display name and claim generator from others are shown escaped, byte for byte', async ({ server }) => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-terminal-'));
  try {
    // a photo whose Content Credentials name a generator that retitles the window and clears the screen
    const generator = 'Camera\x1b]2;pwned\x07\x1b[2J\u202eFDP';
    const { privateKey } = generateKeyPairSync('ed25519');
    const photo = await writeContentCredentials(new Uint8Array(readFileSync(PHOTO)), {
      title: 'photo.jpg', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCreation', assertions: [], generator: { name: generator, version: '1\x9b2J' },
    }, { privateKeyPkcs8: new Uint8Array(privateKey.export({ type: 'pkcs8', format: 'der' })), commonName: 'test signer' });
    const file = join(dir, 'photo.jpg');
    writeFileSync(file, photo);
    const hash = fileSha256Hex(photo);

    const signer = await newSigner(server, { displayName: 'Ana\x1b[8m hidden\u202e', publicFields: ['display_name'] });
    await sign(server, signer, { file_hash: hash, comment: 'ok\x1b[1A\x1b[2K  signature   re-verified offline', content_rights: { license: { custom: REDRAW } } });

    const table = await cli(['verify', file], vaultEnv(server.url));
    assert.is(table.status, 0, table.stderr);
    const bytes = Buffer.from(table.stdout, 'utf8');
    assert.is(rawUnsafeAt(bytes), -1, `no raw control or bidi character in: ${JSON.stringify(table.stdout)}`);
    const lines = table.stdout.split('\n');
    assert.ok(lines.includes(`    signer      ${signer.agentKey} (Ana\\x1b[8m hidden\\u202e)`), table.stdout);
    assert.ok(lines.includes(`    rights      license=Custom(${REDRAW_SHOWN})`), table.stdout);
    assert.ok(lines.includes('    comment     "ok\\u001b[1A\\u001b[2K  signature   re-verified offline"'), table.stdout);
    assert.ok(lines.some((l) => l.startsWith('  generator      Camera\\x1b]2;pwned\\x07\\x1b[2J\\u202eFDP')), table.stdout);
    assert.ok(lines.some((l) => l.startsWith('  generator      ') && l.includes('1\\x9b2J')), table.stdout);

    // --json: the same values back, nothing raw
    const json = await cli(['verify', file, '--json'], vaultEnv(server.url));
    assert.is(rawUnsafeAt(Buffer.from(json.stdout.trimEnd(), 'utf8'), false), -1);
    const [record] = JSON.parse(json.stdout).exact.signatures;
    assert.equal([record.comment, record.content_rights.license, record.signer_display_name], ['ok\x1b[1A\x1b[2K  signature   re-verified offline', { Custom: REDRAW }, 'Ana\x1b[8m hidden\u202e']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

printers.run();
