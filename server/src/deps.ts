// What every feature router and service receives: built once by serve.ts (or the
// test helper) and passed down explicitly.
import type { Context } from 'koa';
import type { Config } from './config.js';
import type { Db } from './store/db.js';
import type { Store } from './store/index.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';

export interface ServerDeps {
  config: Config;
  store: Store;
  /** For health checks and shutdown only; features go through `store`. */
  db: Db;
  log: Logger;
  metrics: Metrics;
  /** The fingerprint pool arrives with the matching issue. */
  pool?: unknown;
}

const DEPS = Symbol('provenant.deps');

/** Remembers the deps on the Koa app (createApp does this). */
export function attachDeps(app: { context: object }, deps: ServerDeps): void {
  (app.context as Record<symbol, unknown>)[DEPS] = deps;
}

/** The deps of the app serving `ctx` (for middleware made without them, e.g. requireAuth). */
export function depsOf(ctx: Pick<Context, 'app'> | { app: { context: object } }): ServerDeps {
  const deps = (ctx.app.context as Record<symbol, unknown>)[DEPS];
  if (!deps) throw new Error('ServerDeps are not attached to this Koa app');
  return deps as ServerDeps;
}
