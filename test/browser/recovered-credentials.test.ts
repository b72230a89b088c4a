// Issue 33 on the verification page, in real Chromium against a real server: a photo a
// vault signed with `--c2pa` (its manifest stored in the repository), then stripped
// (resized, re-encoded, no metadata), dropped on the page: the page computes the copy's
// ISCC Content-Code in the browser, finds the manifest through the Soft Binding
// Resolution API (byBinding) and shows it, with a download of the store the reference
// reader reads back. A picture nobody signed shows none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { linkedVaultEnv, PHOTO, signWithCredentials } from '../helpers/vault.js';
import { readManifestStore } from '../../src/media/c2pa-store.js';
import { CHROMIUM, testInChromium } from '../helpers/chromium.js';


async function dropOnPage(page: import('playwright-core').Page, bytes: Buffer, name: string): Promise<void> {
  await page.evaluate(async ([b64, fileName]) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], fileName, { type: 'image/jpeg' }));
    document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, [bytes.toString('base64'), name] as const);
}

async function inChromium(): Promise<void> {
  const srv: TestServer = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const { copy: signed, manifest_id: manifestId } = await signWithCredentials(await linkedVaultEnv(srv), PHOTO, 'jpg');
    const copy = Buffer.from(signed);
    const meta = await sharp(copy).metadata();
    const stripped = await sharp(copy).resize(Math.round(meta.width! * 0.75)).jpeg({ quality: 80 }).toBuffer();

    const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()}`));
    await page.goto(`${srv.url}/`);
    await dropOnPage(page, stripped, 'stripped.jpg');
    const card = page.locator('#recovered .recovered-manifest');
    await card.first().waitFor({ timeout: 20_000 });
    assert.is(await page.locator('#recovered').isHidden(), false);
    assert.is(await card.locator('.manifest-id').first().textContent(), manifestId);
    assert.match((await card.locator('.validation').first().textContent())!, /found by the ISCC soft binding, \d+% similar/);
    const href = await card.locator('.download').first().getAttribute('href');
    assert.is(href, `/c2pa/v1/manifests/${encodeURIComponent(manifestId!)}`);
    const store = new Uint8Array(await (await fetch(`${srv.url}${href}`)).arrayBuffer());
    assert.is((await readManifestStore(store)).manifest_id, manifestId, 'the download is the store, read back by the reference reader');

    // a picture nobody signed: no recovered credentials
    const pixels = Buffer.from(Array.from({ length: 200 * 150 * 3 }, (_, i) => ((i * 2654435761) >>> 11) & 0xff));
    const unsigned = await sharp(pixels, { raw: { width: 200, height: 150, channels: 3 } }).jpeg().toBuffer();
    await dropOnPage(page, unsigned, 'unsigned.jpg');
    await page.locator('#status').filter({ hasText: 'No signatures found' }).waitFor({ timeout: 20_000 });
    assert.is(await page.locator('#recovered').isHidden(), true);
    assert.equal(problems, [], 'no page errors or CSP violations');
  } finally {
    await browser.close();
    await srv.close();
  }
}

testInChromium(test, 'the verification page recovers a stripped copy\'s Content Credentials by its ISCC code (byBinding)', inChromium);

test.run();
