// Debian's Chromium for the suites that drive a real browser (playwright-core), and the one
// rule of what happens without it: the test runs where it is installed; elsewhere it is
// skipped saying why, and under CI=true (.ci/run installs it) its absence is a failure.
import { existsSync } from 'node:fs';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';

export const CHROMIUM = '/usr/bin/chromium';

/** `run` as the test `title` of `test` in Chromium, or skipped (a failure under CI=true) without it. */
export function testInChromium(test: Test, title: string, run: () => Promise<void>): void {
  if (existsSync(CHROMIUM)) test(title, run);
  else if (process.env.CI === 'true') {
    test('Chromium is installed (CI)', () => {
      assert.unreachable(`${CHROMIUM} is missing: .ci/run installs the Debian package chromium`);
    });
  } else {
    console.log(`  (${CHROMIUM} is missing: the Chromium run is skipped; apt-get install chromium)`);
    test.skip(title, run);
  }
}
