// The HTML report of `provenant bench` (the compiled CLI on real fixtures, with --compare)
// rendered in real Chromium: one self-contained file (no script, nothing fetched), every
// plot present and drawn, the run's conditions at the top, a hostile file name shown as
// text, the files named as media that are none listed by name and reason. A screenshot goes to test-artifacts/bench-report.png (git-ignored).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { compiledFile, packageRoot } from '../../src/lib/wasm.js';
import type { BenchResult } from '../../src/cli/bench/run.js';
import { CHROMIUM } from '../helpers/chromium.js';

const ARTIFACTS = join(packageRoot, 'test-artifacts');
const MAIN = compiledFile('src/cli/main.js');
const MEDIA = join(packageRoot, 'test/fixtures/media');
const AUDIO = join(packageRoot, 'test/fixtures/audio');
const HOSTILE = '<img src=x onerror=alert(1)>.jpg';

function bench(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, 'bench', ...args, '--index-size', '2000', '--min-time', '0', '--workers', '1'], { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 });
  assert.is(r.status, 0, r.stderr);
  return r;
}

test('the report renders in Chromium with every plot, and nothing but itself is loaded', async () => {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.unreachable(`no Chromium at ${CHROMIUM}`);
    console.log(`skipped: no Chromium at ${CHROMIUM}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-report-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const corpus = join(dir, 'corpus');
    mkdirSync(corpus);
    for (const f of ['fruits.jpg', 'cat.gif', 'cockatoo.mp4', 'vtest.avi']) copyFileSync(join(MEDIA, f), join(corpus, f));
    for (const f of ['frontiers-25s.mp3', 'drascula-track2-18s.ogg']) copyFileSync(join(AUDIO, f), join(corpus, f));
    writeFileSync(join(corpus, HOSTILE), readFileSync(join(MEDIA, 'fruits.jpg')).subarray(0, 2000));
    writeFileSync(join(corpus, 'photo.jpg'), 'no photo here\n');

    const old = JSON.parse(bench([corpus, '--json']).stdout) as BenchResult;
    old.quality[0].transforms[0].matched['verify-file'] -= 0.5;
    writeFileSync(join(dir, 'old.json'), JSON.stringify(old));
    const report = join(dir, 'report.html');
    const r = bench([corpus, '--report', report, '--compare', join(dir, 'old.json')]);
    assert.match(r.stderr, `report written to ${report}`);
    const html = readFileSync(report, 'utf8');
    assert.not.match(html, /<script/i);
    assert.not.match(html, /(src|href)\s*=\s*["']?(https?:|\/\/)/i);

    const page = await browser.newPage({ viewport: { width: 1250, height: 900 } });
    const fetched: string[] = [];
    page.on('request', (req) => fetched.push(req.url()));
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await page.goto(pathToFileURL(report).href);
    assert.equal(fetched, [pathToFileURL(report).href], 'the report loads nothing but itself');
    assert.equal(problems, []);

    const conditions = await page.locator('pre.conditions').textContent();
    for (const part of ['suite provenant-variants v2, seed 1', 'machine: ', 'cores', 'node v', 'corpus: ', '2 images, 2 audio, 2 video', '2 named as media but not', 'fpcalc']) {
      assert.ok(conditions!.includes(part), `${part} in ${conditions}`);
    }
    const plots = await page.locator('figure[data-plot]').evaluateAll((figures) => figures.map((f) => {
      const svg = f.querySelector('svg')!;
      const box = svg.getBoundingClientRect();
      return { id: (f as HTMLElement).dataset.plot!, width: box.width, height: box.height, lines: svg.querySelectorAll('polyline').length, bars: svg.querySelectorAll('rect').length };
    }));
    const ids = plots.map((p) => p.id);
    // fpcalc is a peer where it is installed (.ci/run installs it for the ISCC tests)
    const fpcalc = old.peers.some((p) => p.name === 'fpcalc' && p.found);
    const hashes = ['ImagePHash', 'PDQ', 'Features', 'ISCC-Image', 'sharp-phash', 'imghash', 'opencv-orb', 'AudioChromaprint', 'ISCC-Audio', ...(fpcalc ? ['fpcalc'] : []), 'VideoPHash', 'vPDQ', 'ISCC-Video'];
    const expected = ['recall-image', 'recall-audio', 'recall-video', 'roc-image', 'roc-audio', 'roc-video', ...hashes.map((h) => `histogram-${h}`), 'throughput', 'latency', 'compare-recall'];
    assert.equal([...ids].sort(), [...expected].sort());
    for (const p of plots) assert.ok(p.width > 200 && p.height > 100, `${p.id} is drawn at ${p.width}x${p.height}`);
    const by = Object.fromEntries(plots.map((p) => [p.id, p]));
    assert.is(by['roc-image'].lines, 7, 'a ROC curve per image hash (ImagePHash, PDQ, Features, ISCC-Image and the three peers)');
    assert.is(by['roc-audio'].lines, fpcalc ? 3 : 2, 'a ROC curve per audio hash (AudioChromaprint, ISCC-Audio, and fpcalc where installed)');
    assert.is(by['roc-video'].lines, 3, 'VideoPHash, vPDQ and ISCC-Video');
    // bars: the frame plus one per transform per hash
    assert.is(by['recall-image'].bars, 1 + 21 * 7); // suite v2's 21 edits
    assert.is(by['recall-audio'].bars, 1 + 4 * (fpcalc ? 3 : 2));
    assert.is(by['recall-video'].bars, 1 + 4 * 3);
    for (const h of hashes) assert.ok(by[`histogram-${h}`].bars > 2, `histogram-${h} has bars`);
    assert.is(by.throughput.bars, 1 + 3 * 2, 'ours and decode-only per type');
    assert.ok(by['compare-recall'].bars >= 1);
    // the hostile name is text, not markup
    assert.is(await page.locator('img').count(), 0);
    assert.ok((await page.locator('body').textContent())!.includes(HOSTILE));
    // the junk: the truncated JPEG the decoder refused and the text named photo.jpg, each by name and reason
    assert.is(await page.locator('h2#junk').textContent(), 'Named as media but not (2)');
    const junk = await page.locator('ul.junk > li').allTextContents();
    assert.is(junk.length, 2, junk.join('\n'));
    assert.ok(junk[0].startsWith(`${join(corpus, HOSTILE)}: decoder refused: cannot decode this jpeg file: `), junk[0]);
    assert.is(junk[1], `${join(corpus, 'photo.jpg')}: no image inside: the content is text`);
    assert.is(await page.locator('ul.junk code').count(), 2);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'bench-report.png'), fullPage: true });
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
