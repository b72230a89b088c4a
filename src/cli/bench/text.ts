// Text from the corpus (file names, decoder messages) is someone else's: before it goes
// to a terminal every control character is made visible, so that a file named with an
// escape sequence cannot move the cursor, recolour or retitle the terminal, and bidi
// overrides cannot reorder what is shown. (The HTML report escapes for HTML: html.ts.)

// C0 controls, DEL, C1 controls, the bidi embeddings, overrides and isolates, and the
// Unicode line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/gu;

/** `text` with each control character replaced by a visible escape (\x1b, \u202e). */
export function visible(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Fixed-width columns; the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const percent = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined || Number.isNaN(x) ? '-' : `${(100 * x).toFixed(digits)} %`);
export const fixed = (x: number | null | undefined, digits = 2): string => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));
