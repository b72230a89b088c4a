// `provenant integrity FILE [--json]`: the file's integrity report (spec 2.1
// `integrity_report`), as JSON or as readable lines. Exits 0 whatever it finds.
import { integrityReport } from '../media/integrity.js';
import { withCredentialsReader } from '../media/local-credentials.js';
import type { IntegrityReport } from '../lib/integrity.js';
import { fileCommand } from './file-command.js';
import { credentialsLines } from './credentials.js';

function readable(r: IntegrityReport): string[] {
  const lines = [`checks: ${r.checks_performed.join(', ')}`];
  if (r.issues_found.length === 0) lines.push('no issues found');
  for (const i of r.issues_found) {
    const where = i.offset !== undefined ? ` @${i.offset}${i.length !== undefined ? `+${i.length}` : ''}` : '';
    lines.push(`${i.severity.padEnd(8)} ${i.check}${where}: ${i.description}`);
  }
  lines.push(...credentialsLines(r.content_credentials));
  return lines;
}

// the credentials are read in a sandbox process with a deadline (local-credentials.ts)
export const run = fileCommand('integrity', (file) => withCredentialsReader((credentials) => integrityReport(file, { credentials })), readable);
