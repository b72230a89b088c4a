// `provenant admin ...` (decisions.md 10): tiers, users, organizations, apps and
// session tokens from the command line. Each command prints one JSON object on
// stdout; on error it prints a message on stderr and exits non-zero: USAGE_ERROR (2)
// for a command line that cannot run, found before the database is opened, and 1
// for anything after (no such user, a duplicate, no database).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ORG_TIERS, USER_TIERS, StoreConflictError, type OrgTier, type UserTier } from '../store/index.js';
import { ConfigError, databaseFile, loadConfig } from '../config.js';
import type { DomainDeps } from '../domain/deps.js';
import { adoptDataDirSecrets, Secrets } from '../secrets.js';
import { DomainError } from '../errors.js';
import { createOrg, createUserAccount, setOrgTier, setUserTier, userByEmail } from '../domain/accounts.js';
import { createApp, sessionToken } from '../domain/apps.js';
import { createServerCell } from '../domain/cells.js';
import {
  displayName as displayNameSchema,
  email as emailSchema,
  password as passwordSchema,
  username as usernameSchema,
} from '../auth/schema.js';
import { APP_SCOPES, createAppBody } from '../developer/schema.js';
import { zodMessage } from '../middleware.js';
import { exportPdqHashes } from '../domain/export-hashes.js';
import { chmod, open } from 'node:fs/promises';
import type { CliIo } from './serve.js';
import { terminalJson, USAGE_ERROR, UsageError, visible } from 'provenant';
import { loadLogIdentity } from '../tlog/log-key.js';

/** A failure once the command line was fine: exit 1. */
class AdminError extends Error {}

const OPTIONS = {
  'data-dir': { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  'password-file': { type: 'string' },
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
  type: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flag = keyof typeof OPTIONS;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true; allowPositionals: true }>>['values'];

/** Every subcommand takes these. */
const COMMON_FLAGS: readonly Flag[] = ['data-dir', 'help'];

interface Subcommand<Input> {
  /** Its flags as its usage line shows them. */
  synopsis: string;
  /** Lines of usage after the synopsis. */
  notes?: string;
  flags: readonly Flag[];
  /** The first user of a new data directory makes its database; the others need one. */
  createsDatabase?: boolean;
  /** The command line checked, and what it names read, before the database is opened (UsageError). */
  parse(v: Values): Input | Promise<Input>;
  run(deps: DomainDeps, input: Input): Promise<Record<string, unknown>>;
}

function required(values: Values, name: Flag): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function check<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`--${flag}: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

function tierOf<T extends string>(value: string, allowed: readonly T[], flag = 'tier'): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

const READ_ERRORS: Record<string, string> = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' };

/**
 * The password from exactly one of --password-stdin, --password-file or --password
 * (which any local user sees in the process list while the command runs); one
 * trailing newline of the first two is not part of it.
 */
async function passwordOf(v: Values): Promise<string> {
  const given = (['password-stdin', 'password-file', 'password'] as const).filter((f) => v[f] !== undefined);
  if (given.length !== 1) throw new UsageError('give the password by exactly one of --password-stdin, --password-file F or --password P');
  const flag = given[0];
  if (flag === 'password') return check(passwordSchema, v.password, flag);
  let text: string;
  if (flag === 'password-stdin') text = await readStream(process.stdin);
  else {
    const file = required(v, 'password-file');
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const errno = (err as NodeJS.ErrnoException).code ?? '';
      throw new AdminError(`--password-file: cannot read ${file}: ${READ_ERRORS[errno] ?? (err as Error).message}`);
    }
  }
  return check(passwordSchema, text.replace(/\r?\n$/, ''), flag);
}

/** Keeps each subcommand's parse and run agreeing on their Input. */
const subcommand = <Input>(c: Subcommand<Input>): Subcommand<unknown> => c as Subcommand<unknown>;

const SUBCOMMANDS: Record<string, Subcommand<unknown>> = {
  'create-user': subcommand({
    synopsis: '--email E (--password-stdin | --password-file F | --password P) [--display-name N] [--username U] [--tier free|premium|premium_plus] [--server-cell]',
    notes: '  --password P shows the password to every local user (ps); prefer --password-stdin or --password-file.\n  The first create-user on a data directory without a database creates it (and says so on stderr).',
    flags: ['email', 'password', 'password-stdin', 'password-file', 'display-name', 'username', 'tier', 'server-cell'],
    createsDatabase: true,
    async parse(v) {
      return {
        email: check(emailSchema, required(v, 'email'), 'email'),
        username: v.username === undefined ? undefined : check(usernameSchema, v.username, 'username'),
        displayName: v['display-name'] === undefined ? undefined : check(displayNameSchema, v['display-name'], 'display-name'),
        tier: tierOf<UserTier>(v.tier ?? 'free', USER_TIERS),
        serverCell: v['server-cell'] === true,
        password: await passwordOf(v),
      };
    },
    async run(deps, { serverCell, ...account }) {
      const user = await createUserAccount(deps, account);
      const cell = serverCell ? await createServerCell(deps, user.id) : null;
      return { user_id: user.id, agent_pub_key: cell?.agentKey ?? null, did: cell?.did ?? null };
    },
  }),

  'create-org': subcommand({
    synopsis: '--name N --owner EMAIL --tier free|starter|pro|enterprise [--limit N]',
    flags: ['name', 'owner', 'tier', 'limit'],
    parse(v) {
      const limit = v.limit === undefined ? null : Number(v.limit);
      if (limit !== null && !(/^\d+$/.test(v.limit!) && Number.isSafeInteger(limit))) throw new UsageError('--limit must be a non-negative integer');
      return { name: required(v, 'name'), owner: required(v, 'owner'), tier: tierOf<OrgTier>(required(v, 'tier'), ORG_TIERS), limit };
    },
    async run(deps, { name, owner, tier, limit }) {
      const ownerId = (await userByEmail(deps, owner)).id;
      const org = await createOrg(deps, { name, ownerId, tier, customLimit: limit });
      return { org_id: org.id };
    },
  }),

  'create-app': subcommand({
    synopsis: '--owner EMAIL [--org ORG_ID] --name N --redirect-uri URL (repeatable) --scopes "openid sign ..."',
    flags: ['owner', 'org', 'name', 'redirect-uri', 'scopes'],
    parse(v) {
      const owner = required(v, 'owner');
      const parsed = createAppBody.safeParse({
        name: required(v, 'name'),
        redirect_uris: v['redirect-uri'] ?? [],
        scopes: required(v, 'scopes').split(/[\s,]+/).filter(Boolean),
        org_id: v.org ?? null,
      });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        if (issue?.path[0] === 'scopes') throw new UsageError(`--scopes: each scope must be one of ${APP_SCOPES.join(', ')}`);
        throw new UsageError(zodMessage(parsed.error).replace(/^redirect_uris(\.\d+)?/, '--redirect-uri').replace(/^org_id/, '--org'));
      }
      return { owner, app: parsed.data };
    },
    async run(deps, { owner, app }) {
      const created = await createApp(deps, (await userByEmail(deps, owner)).id, app);
      return { client_id: created.id };
    },
  }),

  'set-tier': subcommand({
    synopsis: '(--user EMAIL | --org ORG_ID) --tier T',
    flags: ['user', 'org', 'tier'],
    parse(v) {
      const tier = required(v, 'tier');
      if ((v.user === undefined) === (v.org === undefined)) throw new UsageError('give exactly one of --user EMAIL or --org ORG_ID');
      if (v.user !== undefined) return { user: v.user, tier: tierOf<UserTier>(tier, USER_TIERS) } as const;
      return { org: v.org!, tier: tierOf<OrgTier>(tier, ORG_TIERS) } as const;
    },
    async run(deps, target) {
      if (target.user !== undefined) {
        const user = await userByEmail(deps, target.user);
        await setUserTier(deps, user.id, target.tier);
        return { user_id: user.id, tier: target.tier };
      }
      await setOrgTier(deps, target.org, target.tier);
      return { org_id: target.org, tier: target.tier };
    },
  }),

  'log-key': subcommand({
    synopsis: '',
    notes: 'The transparency log\'s origin and verifier key (<origin>+<key id>+<base64>, signed-note), made in the secrets directory on first use.',
    flags: [],
    parse: () => ({}),
    async run(deps) {
      // the base URL names the origin: the server's environment, as for `provenant serve`
      const { origin, verifierKey } = loadLogIdentity(loadConfig({ ...process.env, PROVENANT_LOG_LEVEL: 'silent' }), deps.secrets);
      return { origin, verifier_key: verifierKey };
    },
  }),

  'export-hashes': subcommand({
    synopsis: '--type pdq --out FILE',
    notes: '  Every live record\'s PDQ in Meta\'s exchange text (images "hash,quality,action_hash"; videos\n  "frame,quality,hash,timestamp,action_hash" per frame), written to FILE (mode 0600); a stored PDQ\n  today\'s rule refuses (a vPDQ timestamp stored before its bound) is skipped and named in the\n  summary (skipped, skipped_records); docs/pdq.md.',
    flags: ['type', 'out'],
    parse(v) {
      if (required(v, 'type') !== 'pdq') throw new UsageError('--type must be pdq');
      return { out: required(v, 'out') };
    },
    async run(deps, { out }) {
      const file = await open(out, 'w', 0o600);
      try {
        await chmod(out, 0o600); // a file that was there keeps its mode otherwise
        const counts = await exportPdqHashes(deps.store, async (lines) => {
          await file.write(`${lines.join('\n')}\n`);
        });
        return { file: out, ...counts };
      } finally {
        await file.close();
      }
    },
  }),

  'session-token': subcommand({
    synopsis: '--email E [--app CLIENT_ID]',
    flags: ['email', 'app'],
    parse: (v) => ({ email: required(v, 'email'), app: v.app }),
    async run(deps, { email, app: appId }) {
      const user = await userByEmail(deps, email);
      return { token: await sessionToken(deps, user.id, appId ?? null) };
    },
  }),
};

const usageOf = (name: string, c: Subcommand<unknown>) =>
  `usage: provenant admin ${name} ${c.synopsis} [--data-dir DIR]\n${c.notes ? `${c.notes}\n` : ''}`;

export const ADMIN_USAGE = `usage: provenant admin <command> [--data-dir DIR] ...   (provenant admin <command> --help for its own)
${Object.entries(SUBCOMMANDS).map(([name, c]) => `  ${name} ${c.synopsis}`).join('\n')}
--data-dir defaults to $PROVENANT_DATA_DIR, else ./data.
`;

/** The subcommand's name: the first positional (the values of our flags are known as such, not taken for it). */
function subcommandName(argv: string[]): string | undefined {
  return parseArgs({ args: argv, options: OPTIONS, strict: false, allowPositionals: true }).positionals[0];
}

export async function admin(argv: string[], io: CliIo = process): Promise<number> {
  const name = subcommandName(argv);
  const sub = name !== undefined && Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  const usage = sub ? usageOf(name!, sub) : ADMIN_USAGE;
  const prefix = sub ? `provenant admin ${name}` : 'provenant admin';

  let values: Values;
  let input: unknown;
  try {
    // a flag of another subcommand is as unknown to this one as a made-up flag
    const flags = [...COMMON_FLAGS, ...(sub?.flags ?? Object.keys(OPTIONS) as Flag[])];
    let positionals: string[];
    try {
      ({ values, positionals } = parseArgs({
        args: argv,
        options: Object.fromEntries(flags.map((f) => [f, OPTIONS[f]])) as typeof OPTIONS,
        strict: true,
        allowPositionals: true,
      }));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.help) {
      io.stdout.write(usage);
      return 0;
    }
    if (name === undefined) throw new UsageError('no command given');
    if (!sub) throw new UsageError(`unknown command ${name}`);
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
    input = await sub.parse(values);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`${visible(`${prefix}: ${err.message}`)}\n${usage}`);
      return USAGE_ERROR;
    }
    if (err instanceof AdminError) {
      io.stderr.write(`${visible(`${prefix}: ${err.message}`)}\n`);
      return 1;
    }
    throw err;
  }

  let deps: DomainDeps | undefined;
  try {
    const env: Record<string, string | undefined> = { ...process.env, PROVENANT_LOG_LEVEL: 'silent' };
    if (values['data-dir'] !== undefined) env.PROVENANT_DATA_DIR = values['data-dir'];
    const config = loadConfig(env);
    // the store (sqlite3, most of the CLI's start-up time) loads only for a command that runs;
    // the admin needs nothing else of the server
    const { openStore } = await import('../store/index.js');
    // A mistyped --data-dir would otherwise get an empty database of its own, and a
    // "no user" answer that hides the real mistake. (PostgreSQL: the database named by
    // PROVENANT_DATABASE_URL, which the server created.)
    const file = databaseFile(config);
    const fresh = config.databaseUrl === null && !existsSync(file);
    if (fresh && !sub.createsDatabase) {
      throw new AdminError(
        `no database at ${file}: give the server's data directory (--data-dir or PROVENANT_DATA_DIR), or create one with the first user (provenant admin create-user)`,
      );
    }
    // the server's adoption of an older data directory's keys (root.ts), before a key is
    // read: else a first command with PROVENANT_SECRETS_DIR set would make new ones there
    adoptDataDirSecrets(config.dataDir, config.secretsDir);
    deps = { store: await openStore({ databaseUrl: config.databaseUrl, sqliteFile: file }), secrets: new Secrets(config.secretsDir) };
    if (fresh) io.stderr.write(`provenant admin: created a new database at ${file}\n`);
    const result = await sub.run(deps, input);
    io.stdout.write(terminalJson(result) + '\n'); // names and addresses are the users' own text
    return 0;
  } catch (err) {
    let message: string;
    if (err instanceof AdminError || err instanceof ConfigError || err instanceof DomainError) message = err.message;
    else if (err instanceof StoreConflictError) message = `${err.what} already exists`;
    else message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`${visible(`${prefix}: ${message}`)}\n`);
    return 1;
  } finally {
    await deps?.store.close();
  }
}

/** The dispatcher's entry (src/cli/main.ts). */
export const run = (args: string[]): Promise<number> => admin(args);
