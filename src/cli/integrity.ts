// `provenant integrity FILE [--json]`: the file's integrity report (spec 2.1
// `integrity_report`), as JSON or as readable lines. Exits 0 whatever it finds.
import { stat } from 'node:fs/promises';
import { integrityReport } from '../media/integrity.js';
import type { IntegrityReport } from '../lib/integrity.js';

const USAGE = 'usage: provenant integrity FILE [--json]';

function readable(r: IntegrityReport): string {
  const lines = [`checks: ${r.checks_performed.join(', ')}`];
  if (r.issues_found.length === 0) lines.push('no issues found');
  for (const i of r.issues_found) {
    const where = i.offset !== undefined ? ` @${i.offset}${i.length !== undefined ? `+${i.length}` : ''}` : '';
    lines.push(`${i.severity.padEnd(8)} ${i.check}${where}: ${i.description}`);
  }
  return lines.join('\n');
}

export async function run(args: string[]): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((a) => a !== '--json');
  if (rest.length !== 1 || rest[0].startsWith('-')) {
    process.stderr.write(`${USAGE}\n`);
    return 1;
  }
  const file = rest[0];
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
  } catch {
    process.stderr.write(`provenant integrity: cannot read ${file}: no such file\n`);
    return 1;
  }
  const report = await integrityReport(file);
  process.stdout.write(`${json ? JSON.stringify(report) : readable(report)}\n`);
  return 0;
}
