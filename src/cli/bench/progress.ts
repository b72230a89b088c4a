// A progress bar with an estimate of the time left, on stderr, only when stderr is a
// terminal (redrawn at most 10 times a second, cleared when done); silent otherwise, so
// that logs and --json output stay clean.

export interface Progress {
  /** Starts a stage of `total` steps. */
  stage(label: string, total: number): void;
  tick(n?: number): void;
  done(): void;
}

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The bar's text: `label [#####-----] 12/40 30 % ETA 0:41`. */
export function progressLine(label: string, done: number, total: number, elapsedMs: number, width = 24): string {
  const share = total === 0 ? 1 : done / total;
  const filled = Math.round(share * width);
  const eta = done === 0 ? NaN : ((elapsedMs / done) * (total - done)) / 1000;
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${Math.floor(share * 100)} % ETA ${clock(eta)}`;
}

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { stage() {}, tick() {}, done() {} };
  let label = '';
  let total = 0;
  let count = 0;
  let started = 0;
  let drawn = 0;
  const draw = (force = false) => {
    const now = Date.now();
    if (!force && now - drawn < 100) return;
    drawn = now;
    stream.write(`\r\x1b[2K${progressLine(label, count, total, now - started).slice(0, Math.max(20, (stream.columns ?? 80) - 1))}`);
  };
  return {
    stage(l, t) {
      label = l;
      total = t;
      count = 0;
      started = Date.now();
      draw(true);
    },
    tick(n = 1) {
      count += n;
      draw(count === total);
    },
    done() {
      stream.write('\r\x1b[2K');
    },
  };
}
