// A server's long-lived parts as the composition root (root.ts) registers them: what
// /healthz shows of each, and the one shutdown that closes them in reverse. A leaf
// (it knows only the logger), so a part's own module can name PartHealth without
// importing the parts list (deps.ts) that names the part.
import type { Logger } from './log.js';

/**
 * What /healthz shows of a part: ok, degraded (the node answers without it, e.g. rate
 * limits per node while the shared Redis is away) or error, and the part's own figures.
 */
export type PartHealth = { status: 'ok' | 'degraded' | 'error' } & Record<string, string | number | boolean | null>;

/** A long-lived part as the composition root registers it. */
export interface Part {
  /** Its key in /healthz and in the log lines of a shutdown. */
  name: string;
  health(): PartHealth | Promise<PartHealth>;
  /** Nothing to close: omitted. */
  close?(): void | Promise<void>;
}

/**
 * The one list of a server's parts: health in the order they were built, and one
 * shutdown for a stop and for a start that failed half-way, closing in reverse order
 * (what was built last may use what was built before it, never the other way).
 */
export class Parts {
  private readonly list: Part[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  add(part: Part): void {
    if (this.closing) throw new Error(`part ${part.name} added to a server that is closing`);
    this.list.push(part);
    this.log.debug('part started', { part: part.name });
  }

  /** Every part's health, by name in build order; a part whose check throws is an error. */
  async health(): Promise<Record<string, PartHealth>> {
    const reports = await Promise.all(
      this.list.map(async (part): Promise<PartHealth> => {
        try {
          return await part.health();
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          this.log.error('health check failed', { part: part.name, error });
          return { status: 'error', error };
        }
      }),
    );
    return Object.fromEntries(this.list.map((part, i) => [part.name, reports[i]]));
  }

  /**
   * Closes every part, last built first, each once even when called again; a part
   * that fails to close is logged and the rest still close; the first failure is
   * thrown at the end.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      let failure: unknown;
      for (const part of [...this.list].reverse()) {
        try {
          await part.close?.();
          this.log.debug('part closed', { part: part.name });
        } catch (err) {
          failure ??= err;
          this.log.error('closing a part failed', { part: part.name, error: err instanceof Error ? err.message : String(err) });
        }
      }
      if (failure !== undefined) throw failure;
    })());
  }
}
