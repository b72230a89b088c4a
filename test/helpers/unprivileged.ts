// Running a child so that a file of this user's with mode 000 is unreadable to it,
// wherever the checkout is (issue 25 item 12). As nobody (uid 65534), the child cannot
// enter a checkout in a private directory (mode 0700, as `mktemp -d` makes) or under
// /root, so it fails to load the CLI before it meets the file.
import { existsSync, statSync } from 'node:fs';
import type { SpawnSyncOptions } from 'node:child_process';
import { packageRoot } from '../../src/lib/wasm.js';

/**
 * Not root: as is. Root reads any file through CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH: when root owns the checkout, the child runs as root without them
 * (util-linux's setpriv drops them from its bounding and inheritable sets; `via` is the
 * command to put before the child's), which still enters a private checkout it owns;
 * when another user owns the checkout, as that user, who can enter it. A file the test
 * made (owned by this user, mode 000) is unreadable either way; a directory the child
 * must reach needs mode 0755.
 */
export function withoutFileOverride(): { options: SpawnSyncOptions; via: string[] } {
  if (process.getuid?.() !== 0) return { options: {}, via: [] };
  const owner = statSync(packageRoot);
  if (owner.uid !== 0) return { options: { uid: owner.uid, gid: owner.gid }, via: [] };
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((p) => existsSync(p));
  if (setpriv === undefined) throw new Error('running as root, this test needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE');
  const caps = '-dac_override,-dac_read_search';
  return { options: {}, via: [setpriv, `--inh-caps=${caps}`, `--bounding-set=${caps}`, '--'] };
}
