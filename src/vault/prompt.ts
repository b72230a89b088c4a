// The terminal side of the vault: one line reader over stdin for the whole process (a
// passphrase, then an approval, may come down one pipe; two readers would split it),
// and the hidden passphrase prompt. Prompts go to stderr so stdout stays the answer.
import { createInterface, type Interface } from 'node:readline';
import { visible } from '../lib/terminal-text.js';

let reader: { rl: Interface; lines: string[]; waiting: ((line: string | null) => void)[]; ended: boolean } | null = null;

function stdinReader(): NonNullable<typeof reader> {
  if (reader !== null) return reader;
  const rl = createInterface({ input: process.stdin, terminal: false });
  const r = { rl, lines: [] as string[], waiting: [] as ((line: string | null) => void)[], ended: false };
  rl.on('line', (line) => {
    const next = r.waiting.shift();
    if (next) next(line);
    else r.lines.push(line);
  });
  rl.on('close', () => {
    r.ended = true;
    for (const w of r.waiting.splice(0)) w(null);
  });
  reader = r;
  return r;
}

/** The next line of stdin, or null at its end. */
export function nextLine(): Promise<string | null> {
  const r = stdinReader();
  if (r.lines.length > 0) return Promise.resolve(r.lines.shift()!);
  if (r.ended) return Promise.resolve(null);
  return new Promise((resolve) => r.waiting.push(resolve));
}

/** Calls `onLine` for every line of stdin from now on (the vault service's answers); returns a stop function. */
export function onLines(onLine: (line: string) => void): () => void {
  const r = stdinReader();
  for (const line of r.lines.splice(0)) onLine(line);
  r.rl.on('line', onLine);
  return () => r.rl.off('line', onLine);
}

/** Stops reading stdin so the process can exit. */
export function closeStdin(): void {
  if (reader === null) return;
  reader.rl.close();
  process.stdin.destroy();
  reader = null;
}

/** Asks a yes/no question on stderr and reads the answer line: only y or yes approves; end of input declines. */
export async function confirm(question: string): Promise<boolean> {
  process.stderr.write(`${visible(question)} [y/N] `);
  const answer = await nextLine();
  if (answer === null) process.stderr.write('\n');
  return answer !== null && /^\s*(y|yes)\s*$/i.test(answer);
}

/** A passphrase typed without echo on a terminal, or the next line of piped stdin. */
export async function readPassphrase(question: string): Promise<string | null> {
  if (!process.stdin.isTTY) {
    process.stderr.write(visible(question));
    return nextLine();
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const muted = rl as unknown as { _writeToOutput(s: string): void };
  process.stderr.write(visible(question));
  muted._writeToOutput = () => {}; // no echo
  return new Promise((resolve) => {
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    rl.on('close', () => resolve(null));
  });
}
