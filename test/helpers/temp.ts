// Temporary folders of a test process, removed when it exits (whatever its tests did:
// failed, skipped their cleanup, or handed the folder to a child), so that a run leaves
// nothing in the temp directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();
let hooked = false;

/** A fresh folder `<tmpdir>/<prefix>XXXXXX` (mode 0700), removed at process exit. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}
