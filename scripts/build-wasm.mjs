// Compiles every AssemblyScript kernel module twice: with SIMD and without.
//   assembly/index.ts          -> build/core.{simd,scalar}.wasm
//   assembly/<name>/index.ts   -> build/<name>.{simd,scalar}.wasm  (assembly/common is shared code)
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import asc from 'assemblyscript/asc';

const root = new URL('..', import.meta.url).pathname;
const modules = [['core', 'assembly/index.ts']];
for (const entry of readdirSync(join(root, 'assembly'), { withFileTypes: true })) {
  if (entry.isDirectory() && entry.name !== 'common' && existsSync(join(root, 'assembly', entry.name, 'index.ts'))) {
    modules.push([entry.name, `assembly/${entry.name}/index.ts`]);
  }
}
const only = process.argv.slice(2);
mkdirSync(join(root, 'build'), { recursive: true });
let failed = false;
for (const [name, entry] of modules) {
  if (only.length && !only.includes(name)) continue;
  for (const target of ['simd', 'scalar']) {
    const out = `build/${name}.${target}.wasm`;
    const { error, stderr } = await asc.main(
      [entry, '--config', 'asconfig.json', '--target', target, '--outFile', out, '--baseDir', root],
    );
    if (error) {
      failed = true;
      console.error(`asc ${entry} (${target}) failed: ${error.message}\n${stderr.toString()}`);
    } else {
      console.log(`built ${out}`);
    }
  }
}
process.exit(failed ? 1 : 0);
