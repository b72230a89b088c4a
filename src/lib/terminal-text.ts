// Others' strings on a terminal (issue 25 item 3). A record's comment, a custom licence,
// a display name, a C2PA claim generator, a web page's request to the vault: text that
// did not come from the user at this keyboard can carry escape sequences that move the
// cursor, rewrite lines already shown (ESC[6A: up six lines) or retitle the window,
// and bidi controls that show a text in another order than it is stored. Every
// printer of the CLI sends such text through `visible` (or, for --json, `terminalJson`),
// which writes each of those characters as its escape: C0 (U+0000-U+001F), DEL and C1
// (U+007F-U+009F) as `\xHH`; the bidi embeddings, overrides, isolates and marks as
// `\uHHHH`. Everything else, any script and emoji, is printed as it is.

/** C0, DEL, C1, and the bidi controls (ALM; LRM, RLM; LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw of UNSAFE (it escapes C0 itself), and the JSON-legal line separators. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, '0');

/** `text` with every control and bidi character made visible (`\x1b`, `\u202e`); one line stays one line. */
export function visible(text: string): string {
  return text.replace(UNSAFE, (c) => (c.charCodeAt(0) <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));
}

/** Lines of a printer's output, each made visible, joined by the printer's own newlines. */
export function visibleLines(lines: readonly string[]): string {
  return lines.map(visible).join('\n');
}

/**
 * JSON for a terminal: the same value (JSON.parse gives it back unchanged), with the
 * characters JSON.stringify leaves raw (DEL, C1, bidi controls) written as `\uHHHH`.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}
