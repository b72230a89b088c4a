// The references the ISCC file pipeline is checked against: Pillow (Debian's
// python3-pil under /usr/bin/python3, driven by test/helpers/pillow_iscc.py, the SDK's
// image normalisation) and fpcalc (Debian's libchromaprint-tools, the SDK's audio
// features); and OpenCV (python3-opencv), whose FAST the features kernel's corners are
// checked against. Where one is missing its suite is skipped and says why; under CI=true
// that is a failure (.ci/run installs python3-pil, libchromaprint-tools, python3-opencv).
import { spawnSync } from 'node:child_process';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';

export const PYTHON = '/usr/bin/python3';
const HELPER = new URL('./pillow_iscc.py', import.meta.url).pathname;

/** Why `what` cannot run here (null: it can). */
export function referenceUnavailable(what: 'pillow' | 'fpcalc' | 'opencv'): string | null {
  if (what === 'opencv') {
    const probe = spawnSync(PYTHON, ['-c', 'import cv2'], { encoding: 'utf8' });
    return probe.error || probe.status !== 0 ? `OpenCV is not importable by ${PYTHON} (apt-get install python3-opencv)` : null;
  }
  if (what === 'pillow') {
    const probe = spawnSync(PYTHON, ['-c', 'import PIL'], { encoding: 'utf8' });
    return probe.error || probe.status !== 0 ? `Pillow is not importable by ${PYTHON} (apt-get install python3-pil)` : null;
  }
  const probe = spawnSync('fpcalc', ['-version'], { encoding: 'utf8' });
  return probe.error || probe.status !== 0 ? 'fpcalc is not installed (apt-get install libchromaprint-tools)' : null;
}

/** Runs `tests` when `what` is there; otherwise says why and skips them, or under CI=true fails in their place. */
export function runWithReference(what: 'pillow' | 'fpcalc' | 'opencv', tests: Test): void {
  const reason = referenceUnavailable(what);
  if (reason === null) return tests.run();
  if (process.env.CI === 'true') {
    const ci = suite(`${what} reference (CI)`);
    ci(`${what} is installed`, () => assert.unreachable(reason));
    return ci.run();
  }
  console.log(`  (skipped: ${reason})`);
}

export interface PillowNormalized {
  grey: number[];
  box: [number, number, number, number];
  mode: string;
  error?: string;
}

function pillow(args: string[], input?: Uint8Array): string {
  const res = spawnSync(PYTHON, [HELPER, ...args], { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`pillow_iscc.py ${args[0]} failed: ${res.stderr}`);
  return res.stdout;
}

/** The SDK's normalisation of each file, by Pillow (one JSON line per file). */
export function pillowFiles(paths: string[]): PillowNormalized[] {
  return pillow(['file', ...paths]).trim().split('\n').map((l) => JSON.parse(l) as PillowNormalized);
}

/** The SDK's normalisation (without the EXIF step) of raw pixels, by Pillow. */
export function pillowPixels(pixels: Uint8Array, width: number, height: number, channels: number): PillowNormalized {
  return JSON.parse(pillow(['pixels', String(width), String(height), String(channels)], pixels)) as PillowNormalized;
}

/** fpcalc's raw fingerprint as the SDK asks for it: -raw -signed -length 0 (whole file). */
export function fpcalcSigned(path: string): number[] {
  const res = spawnSync('fpcalc', ['-raw', '-json', '-signed', '-length', '0', path], { encoding: 'utf8' });
  // fpcalc exits 3 on a decoding error at the very end of some files, after printing the fingerprint
  if (!res.stdout) throw new Error(`fpcalc failed on ${path}: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { fingerprint: number[] }).fingerprint;
}
