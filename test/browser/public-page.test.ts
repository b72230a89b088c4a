// The verification page (GET /) and the badge widget in real Chromium, against a real
// server: a signed photo dropped on the page shows its signer (exact match, hashed in
// the browser), a resized copy shows the perceptual match (fingerprinted in the
// browser), each match proven in the transparency log in the browser (and a tampered entry
// refused), the contact form answers, no Content-Security-Policy violation; badge.js on
// another origin renders the badge; a hostile signer name gives a well-formed SVG.
// Screenshots (desktop and phone) go to test-artifacts/ (git-ignored).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { fingerprintFile, parseProofBundle } from 'provenant';
import { packageRoot } from '../../src/lib/wasm.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newSigner, S, sign } from '../public/support.js';
import { CHROMIUM, testInChromium } from '../helpers/chromium.js';

const PHOTO = join(packageRoot, 'test/fixtures/media/fruits.jpg');
const ARTIFACTS = join(packageRoot, 'test-artifacts');

function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

async function inChromium(): Promise<void> {
  if (!existsSync(join(packageRoot, 'dist/src/lib/sha256.js'))) {
    assert.unreachable('dist/ is not compiled: run npm run build:ts (the page imports the compiled browser modules)');
  }
  const srv: TestServer = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const embedder = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<!doctype html><p>Photo: <span id="b1" data-hash="${hashOfPhoto}"></span> <span id="b2" data-hash="${'0'.repeat(64)}" data-style="minimal" data-theme="dark"></span></p>` +
        `<script src="${srv.url}/badge.js" async></script>`,
    );
  });
  const photo = readFileSync(PHOTO);
  const hashOfPhoto = createHash('sha256').update(photo).digest('hex');
  try {
    mkdirSync(ARTIFACTS, { recursive: true });
    const signer = await newSigner(srv, { displayName: 'Fruit Photographer', publicFields: ['display_name'] });
    const fp = await fingerprintFile(PHOTO);
    const photoAction = await sign(srv, signer, {
      file_hash: hashOfPhoto, perceptual_hash: fp, intent: 'Authorship', ai_generation: 'none',
      content_rights: { license: 'cc-by', ai_training: 'not_allowed', contact_preference: 'allow_contact_requests' },
    });

    const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
    const problems = watch(page);
    await page.goto(`${srv.url}/`);

    // drop the photo itself (the file input, as a keyboard user would choose it)
    await page.setInputFiles('#file', PHOTO);
    const exact = page.locator('.result[data-match="exact"]');
    await exact.first().waitFor({ timeout: 20_000 });
    assert.is((await exact.locator('.signer-name').first().textContent())?.trim(), 'Fruit Photographer');
    assert.is(await page.locator('#sha256').textContent(), hashOfPhoto, 'SHA-256 computed in the browser');
    const rights = (await exact.locator('.rights').first().textContent())!;
    for (const part of ['license: CCBY', 'ai training: NotAllowed', 'contact preference: AllowContactRequests']) assert.ok(rights.includes(part), `${part} in ${rights}`);
    assert.is(await exact.locator('.ai').first().textContent(), 'None');
    assert.match((await page.locator('#fingerprint').textContent())!, /^ImagePHash [0-9a-f]{16}$/);

    // the record proven in the transparency log in the browser (issue 27): the index is the
    // proof bundle's, the checkpoint signed by the served log key's origin
    const logCell = exact.locator('.log').first();
    await exact.locator('.log[data-state="verified"]').first().waitFor({ timeout: 20_000 });
    const line = (await logCell.textContent())!;
    const proof = await fetch(`${srv.url}${S}/proof?action_hash=${photoAction}`);
    assert.is(proof.status, 200);
    const proofIndex = parseProofBundle(await proof.text()).index;
    const shown = /^In the log at index (\d+), checkpoint (\d+) signed by (\S+)$/.exec(line);
    assert.ok(shown, line);
    assert.is(Number(shown![1]), proofIndex);
    assert.ok(Number(shown![2]) > proofIndex, line);
    assert.is(shown![3], srv.deps.transparencyLog.identity.origin);

    // the contact form answers with the relay's one message
    await exact.locator('.contact summary').first().click();
    const form = exact.locator('.contact-form').first();
    await form.getByLabel('Your name').fill('Page Visitor');
    await form.getByLabel('Your e-mail').fill('visitor@example.org');
    await form.getByLabel('Message').fill('Hello from the page');
    await form.getByRole('button', { name: 'Send' }).click();
    await form.locator('.contact-status').filter({ hasText: 'Thank you' }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'public-page-exact.png'), fullPage: true });

    // drop a resized, re-encoded copy: a different SHA-256, the same signer by fingerprint
    const small = await sharp(photo).resize(160).jpeg({ quality: 70 }).toBuffer();
    await page.evaluate(async (b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'fruits-small.jpg', { type: 'image/jpeg' }));
      document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, small.toString('base64'));
    const perceptual = page.locator('.result[data-match="perceptual"]');
    await perceptual.first().waitFor({ timeout: 20_000 });
    assert.is(await page.locator('.result[data-match="exact"]').count(), 0, 'the copy has no exact match');
    assert.is((await perceptual.locator('.signer-name').first().textContent())?.trim(), 'Fruit Photographer');
    const similarity = Number(/(\d+)% similar/.exec((await perceptual.locator('.match').first().textContent())!)?.[1]);
    assert.ok(similarity >= 70, `similarity ${similarity}`);
    assert.is(await page.locator('#sha256').textContent(), createHash('sha256').update(small).digest('hex'));
    await page.screenshot({ path: join(ARTIFACTS, 'public-page-perceptual.png'), fullPage: true });

    // a phone-sized screen: nothing wider than the viewport
    await page.setViewportSize({ width: 375, height: 812 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling on a phone (${overflow} px too wide)`);
    await page.screenshot({ path: join(ARTIFACTS, 'public-page-phone.png'), fullPage: true });

    // a hostile name makes a well-formed SVG, as the browser's XML parser sees it
    const hostile = await newSigner(srv, { displayName: '<svg onload=alert(1)>&amp;"\'\u0007]]>', publicFields: ['display_name'] });
    const hostileFile = createHash('sha256').update('hostile').digest('hex');
    await sign(srv, hostile, { file_hash: hostileFile });
    for (const query of ['style=badge&theme=light', 'style=minimal&theme=dark']) {
      const parsed = await page.evaluate(async (url) => {
        const doc = new DOMParser().parseFromString(await (await fetch(url)).text(), 'image/svg+xml');
        return { error: doc.getElementsByTagName('parsererror').length, root: doc.documentElement.nodeName, text: doc.documentElement.textContent, scripts: doc.querySelectorAll('[onload],script').length };
      }, `${S}/badge?hash=${hostileFile}&${query}`);
      assert.equal([parsed.error, parsed.root, parsed.scripts], [0, 'svg', 0], query);
      assert.ok(parsed.text!.includes('Signed by <svg onload=alert(1)>&amp;"\']]>'), 'the name is text');
    }
    assert.equal(problems, [], 'no page errors or CSP violations');
    await page.close();

    // an entry bundle changed on the way (a digit of the record's signed_at, which only the
    // Merkle proof covers): the page refuses the proof
    const tampered = await browser.newPage();
    await tampered.route('**/log/tile/entries/**', async (route) => {
      const res = await route.fetch();
      const body = Buffer.from(await res.body());
      const at = body.indexOf(Buffer.from('"signed_at":'), body.indexOf(Buffer.from(hashOfPhoto))) + '"signed_at":'.length;
      assert.ok(at > 20 && body[at]! >= 0x30 && body[at]! <= 0x39, 'the photo\'s entry is in the bundle');
      body[at] = body[at] === 0x31 ? 0x32 : 0x31;
      await route.fulfill({ response: res, body });
    });
    await tampered.goto(`${srv.url}/?hash=${hashOfPhoto}`);
    await tampered.locator('.log[data-state="refused"]').first().waitFor({ timeout: 20_000 });
    assert.match((await tampered.locator('.log').first().textContent())!, /^The log's proof did not verify/);
    await tampered.close();

    // badge.js on another origin
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', () => resolve()));
    const other = await browser.newPage();
    const otherProblems = watch(other);
    await other.goto(`http://127.0.0.1:${(embedder.address() as AddressInfo).port}/`);
    await other.locator('#b1 img[alt="Provenant: signed by 1 signer"]').waitFor({ timeout: 10_000 });
    await other.locator('#b2 img[alt="Provenant: unsigned"]').waitFor({ timeout: 10_000 });
    assert.is(await other.locator('#b1 a').getAttribute('href'), `${srv.url}/?hash=${hashOfPhoto}`);
    assert.ok(await other.locator('#b1 img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the SVG loaded as an image');
    await other.screenshot({ path: join(ARTIFACTS, 'badge-widget.png') });
    assert.equal(otherProblems, []);
  } finally {
    await browser.close();
    embedder.close();
    await srv.close();
  }
}

testInChromium(test, 'the verification page in Chromium: exact and perceptual matches, contact form, phone width, badge widget', inChromium);

test.run();
