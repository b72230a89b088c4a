// The integrity task file: called directly, and through the worker pool when the
// compiled task (dist/workers/integrity.js, made by `npm run build:ts`) is there.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync } from 'node:fs';
import integrity from '../../workers/integrity.js';
import { createFingerprintPool } from '../../src/pool/index.js';
import { packageRoot } from '../../src/lib/wasm.js';

const png = new Uint8Array(readFileSync(new URL('../fixtures/integrity/plant-crop.png', import.meta.url)));
const elf = new Uint8Array(256);
elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
elf[16] = 2;
elf[20] = 1;
const suspicious = new Uint8Array([...png, ...elf]);

test('the task function gives the report of the transferred bytes', async () => {
  const r = await integrity({ buffer: suspicious.slice().buffer });
  assert.ok(r.checks_performed.includes('AppendedFileDetection'));
  assert.ok(r.issues_found.some((i) => i.check === 'AppendedFileDetection' && i.severity === 'Critical'));
});

test('the pool runs the integrity task', async () => {
  if (!existsSync(`${packageRoot}/dist/workers/integrity.js`)) {
    console.log('  (dist/workers/integrity.js not compiled: pool run skipped)');
    return;
  }
  const pool = createFingerprintPool({ workers: 1 });
  try {
    const buffer = suspicious.slice().buffer;
    const r = await pool.run<{ issues_found: { severity: string }[] }>('integrity', { buffer }, [buffer]);
    assert.ok(r.issues_found.some((i) => i.severity === 'Critical'));
  } finally {
    await pool.close();
  }
});

test.run();
