// Child processes seen from outside (/proc): for the decoder sandbox's tests.
import { readFileSync } from 'node:fs';

/** [state, CPU time in clock ticks (user + system)] of a process, or null once it is gone. */
function stat(pid: number): [string, number] | null {
  try {
    // the fields after "(comm)": state is the first, utime and stime the 12th and 13th
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return [f[0], Number(f[11]) + Number(f[12])];
  } catch {
    return null;
  }
}

/** The process is gone, or has ended and waits to be reaped (a zombie). */
export function ended(pid: number): boolean {
  const s = stat(pid);
  return s === null || s[0] === 'Z';
}

/**
 * Resolves once the process has used `ms` more of CPU time than when called (so that
 * it is busy with work just sent to it); rejects after `timeoutMs`.
 */
export async function busyFor(pid: number, ms: number, timeoutMs = 10_000): Promise<void> {
  const ticks = Math.ceil(ms / 10); // USER_HZ is 100 on Linux
  const start = stat(pid)?.[1] ?? 0;
  const until = Date.now() + timeoutMs;
  while ((stat(pid)?.[1] ?? Infinity) - start < ticks) {
    if (Date.now() > until) throw new Error(`process ${pid} did not use ${ms} ms of CPU within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
