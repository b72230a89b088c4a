// `provenant admin ...` (decisions.md 10): tiers, users, organizations, apps and
// session tokens from the command line. Each command prints one JSON object on
// stdout; on error it prints a message on stderr and exits non-zero.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ORG_TIERS, USER_TIERS, StoreConflictError, type OrgTier, type UserTier } from '../store/accounts.js';
import { ConfigError, loadConfig } from '../server/config.js';
import type { ServerDeps } from '../server/deps.js';
import { ApiError } from '../server/errors.js';
import { createLogger } from '../server/log.js';
import { openDeps } from '../server/serve.js';
import { createServerCell } from '../server/accounts/cells.js';
import { createUserAccount } from '../server/accounts/service.js';
import { email as emailSchema, password as passwordSchema, username as usernameSchema } from '../server/auth/schema.js';
import { issueSessionToken } from '../server/auth/tokens.js';
import { APP_SCOPES, createAppBody } from '../server/developer/schema.js';
import { createApp } from '../server/developer/service.js';
import { zodMessage } from '../server/middleware.js';
import type { CliIo } from './serve.js';

export const ADMIN_USAGE = `usage: provenant admin <command> [--data-dir DIR] ...
  create-user --email E --password P [--display-name N] [--username U] [--tier free|premium|premium_plus] [--server-cell]
  create-org --name N --owner EMAIL --tier free|starter|pro|enterprise [--limit N]
  create-app --owner EMAIL [--org ORG_ID] --name N --redirect-uri URL (repeatable) --scopes "openid sign ..."
  set-tier (--user EMAIL | --org ORG_ID) --tier T
  session-token --email E [--app CLIENT_ID]
`;

class AdminError extends Error {}

const OPTIONS = {
  'data-dir': { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'display-name': { type: 'string' },
  username: { type: 'string' },
  tier: { type: 'string' },
  'server-cell': { type: 'boolean' },
  name: { type: 'string' },
  owner: { type: 'string' },
  limit: { type: 'string' },
  org: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  scopes: { type: 'string' },
  user: { type: 'string' },
  app: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true; allowPositionals: true }>>['values'];

function required(values: Values, name: keyof Values): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new AdminError(`--${name} is required`);
  return v;
}

function check<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new AdminError(`--${flag}: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

function tierOf<T extends string>(value: string, allowed: readonly T[], flag = 'tier'): T {
  if (!(allowed as readonly string[]).includes(value)) throw new AdminError(`--${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

async function userByEmail(deps: ServerDeps, email: string) {
  const user = await deps.store.accounts.findUserByEmail(email.toLowerCase());
  if (!user) throw new AdminError(`no user with e-mail ${email}`);
  return user;
}

const COMMANDS: Record<string, (deps: ServerDeps, v: Values) => Promise<Record<string, unknown>>> = {
  async 'create-user'(deps, v) {
    const email = check(emailSchema, required(v, 'email'), 'email');
    const password = check(passwordSchema, required(v, 'password'), 'password');
    const username = v.username === undefined ? undefined : check(usernameSchema, v.username, 'username');
    const tier = tierOf<UserTier>(v.tier ?? 'free', USER_TIERS);
    const user = await createUserAccount(deps, { email, password, username, displayName: v['display-name'], tier });
    const cell = v['server-cell'] ? await createServerCell(deps, user.id) : null;
    return { user_id: user.id, agent_pub_key: cell?.agentKey ?? null, did: cell?.did ?? null };
  },

  async 'create-org'(deps, v) {
    const name = required(v, 'name');
    const owner = await userByEmail(deps, required(v, 'owner'));
    const tier = tierOf<OrgTier>(required(v, 'tier'), ORG_TIERS);
    const limit = v.limit === undefined ? null : Number(v.limit);
    if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 0)) throw new AdminError('--limit must be a non-negative integer');
    const org = await deps.store.accounts.createOrg({ id: randomUUID(), name, ownerId: owner.id, tier, customLimit: limit });
    return { org_id: org.id };
  },

  async 'create-app'(deps, v) {
    const owner = await userByEmail(deps, required(v, 'owner'));
    const scopes = required(v, 'scopes').split(/[\s,]+/).filter(Boolean);
    const parsed = createAppBody.safeParse({
      name: required(v, 'name'),
      redirect_uris: v['redirect-uri'] ?? [],
      scopes,
      org_id: v.org ?? null,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      if (issue?.path[0] === 'scopes') throw new AdminError(`--scopes: each scope must be one of ${APP_SCOPES.join(', ')}`);
      throw new AdminError(zodMessage(parsed.error).replace(/^redirect_uris(\.\d+)?/, '--redirect-uri').replace(/^org_id/, '--org'));
    }
    const app = await createApp(deps, owner.id, parsed.data);
    return { client_id: app.id };
  },

  async 'set-tier'(deps, v) {
    const tier = required(v, 'tier');
    if ((v.user === undefined) === (v.org === undefined)) throw new AdminError('give exactly one of --user EMAIL or --org ORG_ID');
    if (v.user !== undefined) {
      const user = await userByEmail(deps, v.user);
      await deps.store.accounts.setUserTier(user.id, tierOf<UserTier>(tier, USER_TIERS));
      return { user_id: user.id, tier };
    }
    const orgTier = tierOf<OrgTier>(tier, ORG_TIERS);
    if (!(await deps.store.accounts.setOrgTier(v.org!, orgTier))) throw new AdminError(`no organization ${v.org}`);
    return { org_id: v.org, tier };
  },

  async 'session-token'(deps, v) {
    const user = await userByEmail(deps, required(v, 'email'));
    if (v.app !== undefined) {
      const app = await deps.store.accounts.getApp(v.app);
      if (!app) throw new AdminError(`no app ${v.app}`);
      if (app.ownerId !== user.id) throw new AdminError(`app ${v.app} is not owned by ${user.email}`);
    }
    return { token: await issueSessionToken(deps, user.id, v.app ?? null) };
  },
};

export async function admin(argv: string[], io: CliIo = process): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true }));
  } catch (err) {
    io.stderr.write(`provenant admin: ${(err as Error).message}\n${ADMIN_USAGE}`);
    return 2;
  }
  const [command, ...extra] = positionals;
  if (values.help || command === undefined) {
    (values.help ? io.stdout : io.stderr).write(ADMIN_USAGE);
    return values.help ? 0 : 2;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run || extra.length > 0) {
    io.stderr.write(`provenant admin: unknown command ${[command, ...extra].join(' ')}\n${ADMIN_USAGE}`);
    return 2;
  }

  let deps: ServerDeps | undefined;
  try {
    const env: Record<string, string | undefined> = { ...process.env, PROVENANT_LOG_LEVEL: 'silent' };
    if (values['data-dir'] !== undefined) env.PROVENANT_DATA_DIR = values['data-dir'];
    deps = await openDeps(loadConfig(env), { log: createLogger('silent') });
    const result = await run(deps, values);
    io.stdout.write(JSON.stringify(result) + '\n');
    return 0;
  } catch (err) {
    let message: string;
    if (err instanceof AdminError || err instanceof ConfigError || err instanceof ApiError) message = err.message;
    else if (err instanceof StoreConflictError) message = `${err.field === 'unknown' ? 'the record' : err.field} already exists`;
    else message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`provenant admin ${command}: ${message}\n`);
    return 1;
  } finally {
    await deps?.db.close();
  }
}

/** The dispatcher's entry (src/cli/main.ts). */
export const run = (args: string[]): Promise<number> => admin(args);
