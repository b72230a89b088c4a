// Table helpers for the terminal output. Text from the corpus (file names, decoder
// messages) goes through the CLI's one `visible` (src/lib/terminal-text.ts) before it is
// printed: control and bidi characters made visible. (The HTML report escapes for HTML.)
export { visible } from '../../lib/terminal-text.js';

/** Fixed-width columns; the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const percent = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined || Number.isNaN(x) ? '-' : `${(100 * x).toFixed(digits)} %`);
export const fixed = (x: number | null | undefined, digits = 2): string => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));
