// `npm run bench [-- NAME...]`: runs every bench/*.bench.ts (or those whose name
// contains one of NAME) one after another, each printing its rows of ours, the
// named peer's figure from the same run, and the ratio.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const files = readdirSync(`${root}bench`)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((n) => f.includes(n)))
  .sort();
let failed = 0;
for (const file of files) {
  console.log(`\n### bench/${file}`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', `bench/${file}`], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
