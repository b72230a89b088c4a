// `provenant vault <init|sign|revoke|list|whoami|link|quota|serve|allow>`: the device
// vault (decisions.md 2 and 5). Each subcommand parses its flags, calls src/vault/ and
// prints a readable answer, or one JSON object with --json. A failure is one line on
// stderr and exit 1; a wrong command line, its usage and exit 2. Everything printed goes
// through visible()/terminalJson() (lib/terminal-text.ts): a request's fields, records
// and the server's messages are others' text.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InvalidFieldError, isHex64, type RecordContent } from '../lib/records.js';
import { terminalJson, visible, visibleLines } from '../lib/terminal-text.js';
import { ProvenantClient, type QuotaState } from '../sdk/client.js';
import { VAULT_APPROVAL_TIMEOUT_MS, VAULT_DEFAULT_PORT } from '../sdk/vault.js';
import { VaultCommandError } from '../vault/errors.js';
import { createKeyFile, openKeyFile } from '../vault/keyfile.js';
import { closeStdin, confirm, nextLine, onLines, readPassphrase } from '../vault/prompt.js';
import { startVaultService, type Answer, type PendingRequest } from '../vault/serve.js';
import { commandErrorOf, signAndPublish, type Declaration, type Draft } from '../vault/sign.js';
import { writeSignedCopy } from '../vault/c2pa.js';
import { defaultKeyFile, normalizeOrigin, VaultState } from '../vault/state.js';
import { openVault, quotaSyncBody, signChallenge, signRevocationOf } from '../vault/vault.js';
import type { Command } from './command.js';
import { USAGE_ERROR, UsageError } from './usage.js';

const DEFAULT_SERVER = 'http://localhost:8080';

const USAGE = `usage: provenant vault <command> [options]
  init [--encrypt]                       a new Ed25519 identity in the key file (0600); prints the agent key and DID
  sign FILE... [--intent I] [--ai-generation none|assisted|generated] [--license L]
       [--commercial-licensing C] [--ai-training T] [--contact-preference P] [--comment TEXT]
       [--supersedes ACTION_HASH] [--client-id ID] [--c2pa OUT] [--yes]
                                         hash, fingerprint and check locally, approve, sign, publish;
                                         --c2pa: also write OUT, a copy with Content Credentials
                                         carrying the record and its ISCC soft binding, and store
                                         the manifest on the server (one FILE; needs --ai-generation)
  revoke ACTION_HASH [--reason TEXT] [--yes]
  list                                   the records this vault signed
  whoami                                 the identity, its key file and linked account
  link [--email E (--password-stdin | --password-file F) | --token T]
                                         link this identity to an account (or create one) and keep the session
  quota [--client-id ID]                 the signing quota, recounted by the server
  serve [--port N] [--allow-origin ORIGIN]... [--approval-timeout SECONDS]
                                         the signing service for apps on this machine (127.0.0.1:${VAULT_DEFAULT_PORT})
  allow [ORIGIN...] [--remove]           list, add or remove the web origins that may call serve
common: --key FILE (default $PROVENANT_VAULT_KEY, else ~/.config/provenant/vault/key.json)
        --server URL (default $PROVENANT_SERVER, else ${DEFAULT_SERVER}) --json --help
        an encrypted key's passphrase comes from $PROVENANT_VAULT_PASSPHRASE or a prompt
`;

const COMMON = {
  key: { type: 'string' },
  server: { type: 'string' },
  json: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | string[] | undefined>;
interface Ctx { values: Values; positionals: string[]; keyFile: string; server: string; json: boolean }

function parse(args: string[], options: ParseArgsConfig['options']): Ctx {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values as Values;
  const server = String(values.server ?? process.env.PROVENANT_SERVER ?? DEFAULT_SERVER).replace(/\/+$/, '');
  try {
    new URL(server);
  } catch {
    throw new UsageError(`--server must be a URL, got ${JSON.stringify(server)}`);
  }
  return { values, positionals: parsed.positionals, keyFile: String(values.key ?? defaultKeyFile()), server, json: values.json === true };
}

/** The answer on stdout: JSON, or the readable lines, each made visible (a newline inside one stays in it, escaped). */
function out(ctx: Ctx, json: unknown, lines: string[]): void {
  process.stdout.write(`${ctx.json ? terminalJson(json) : visibleLines(lines)}\n`);
}

function noPositionals(ctx: Ctx): void {
  if (ctx.positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.positionals[0])}`);
}

// ------------------------------------------------------------------ init

async function init(args: string[]): Promise<number> {
  const ctx = parse(args, { encrypt: { type: 'boolean' } });
  noPositionals(ctx);
  let passphrase: string | null = process.env.PROVENANT_VAULT_PASSPHRASE || null;
  if (passphrase === null && ctx.values.encrypt) {
    passphrase = await readPassphrase('New passphrase: ');
    if (process.stdin.isTTY && passphrase && (await readPassphrase('Again: ')) !== passphrase) throw new UsageError('the two passphrases differ');
    if (!passphrase) throw new UsageError('--encrypt needs a non-empty passphrase');
  }
  const key = createKeyFile(ctx.keyFile, passphrase);
  out(ctx, { agent_pub_key: key.agentPubKey, did: key.did },
    [`agent key  ${key.agentPubKey}`, `DID        ${key.did}`, `key file   ${key.path} (${key.encrypted ? 'encrypted' : 'not encrypted'}, mode 0600)`]);
  return 0;
}

// ------------------------------------------------------------------ sign

const SIGN_FLAGS = {
  intent: { type: 'string' },
  'ai-generation': { type: 'string' },
  license: { type: 'string' },
  'commercial-licensing': { type: 'string' },
  'ai-training': { type: 'string' },
  'contact-preference': { type: 'string' },
  comment: { type: 'string' },
  supersedes: { type: 'string' },
  'client-id': { type: 'string' },
  c2pa: { type: 'string' },
} as const;

function declarationOf(values: Values): Declaration {
  const d: Declaration = {};
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  if (str('intent') !== undefined) d.intent = str('intent');
  if (str('ai-generation') !== undefined) d.ai_generation = str('ai-generation');
  if (str('comment') !== undefined) d.comment = str('comment');
  if (str('supersedes') !== undefined) d.supersedes = str('supersedes');
  const rights: Record<string, unknown> = {};
  for (const [flag, field] of [['license', 'license'], ['commercial-licensing', 'commercial_licensing'], ['ai-training', 'ai_training'], ['contact-preference', 'contact_preference']]) {
    const v = str(flag);
    if (v !== undefined) rights[field] = field === 'license' && v.startsWith('custom:') ? { custom: v.slice(7) } : v;
  }
  if (Object.keys(rights).length > 0) d.content_rights = rights;
  return d;
}

/** A bar on stderr when it is a terminal: many files take a while. */
function progressBar(): (stage: string, done: number, total: number) => void {
  if (!process.stderr.isTTY) return () => {};
  return (stage, done, total) => {
    const width = 30;
    const filled = Math.round((done / total) * width);
    process.stderr.write(`\r${stage.padEnd(10)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}${done === total ? '\n' : ''}`);
  };
}

function rightsLine(c: RecordContent): string {
  const r = c.content_rights;
  if (r === null) return 'none declared';
  const parts = Object.entries(r).filter(([, v]) => v !== null).map(([k, v]) => `${k} ${typeof v === 'object' ? `Custom "${(v as { Custom: string }).Custom}"` : v}`);
  return parts.length > 0 ? parts.join(', ') : 'none declared';
}

function describeDraft(d: Draft): string[] {
  const c = d.content;
  const fp = c.perceptual_hash as { hash_type?: string } | null;
  const issues = (c.integrity_report as { issues_found?: unknown[] } | null)?.issues_found?.length ?? 0;
  return [
    `  ${d.file}`,
    `    sha256         ${c.file_hash}`,
    `    fingerprint    ${fp?.hash_type ?? 'none (not a media type the library fingerprints)'}`,
    ...(c.pdq_hash === undefined ? [] : [`    pdq            ${c.pdq_hash.hash_type === 'PDQ' ? `${c.pdq_hash.hash_value}, quality ${c.pdq_hash.quality}` : `vPDQ, ${c.pdq_hash.frames.length} frames`}`]),
    ...(c.iscc === undefined ? [] : [`    iscc           ${c.iscc}`]),
    ...(fp?.hash_type !== 'ImagePHash' ? [] : [`    features       ${c.features === undefined || d.features === null ? 'none (too few keypoints: copies are matched by the global hashes alone)' : `${c.features.count} local features (${d.features.length} bytes), SHA-256 ${c.features.digest.slice(0, 16)}...`}`]),
    `    integrity      ${issues === 0 ? 'no issues found' : `${issues} issue(s) found`}`,
    `    intent         ${c.intent}; AI generation ${c.ai_generation ?? 'not declared'}`,
    `    rights         ${rightsLine(c)}`,
    ...(c.comment !== null ? [`    comment        ${JSON.stringify(c.comment)}`] : []),
    ...(c.supersedes !== null ? [`    amends         ${c.supersedes}`] : []),
  ];
}

function quotaLine(q: QuotaState): string {
  return `${q.scope === 'org' ? `organization pool${q.sponsor ? ` of ${q.sponsor.app_name}` : ''}` : 'personal quota'} (${q.tier}): ${q.used} of ${q.limit ?? 'unlimited'} used${q.resets_at ? `, resets ${q.resets_at}` : ''}`;
}

async function sign(args: string[]): Promise<number> {
  const ctx = parse(args, SIGN_FLAGS);
  if (ctx.positionals.length === 0) throw new UsageError('name at least one FILE to sign');
  const supersedes = ctx.values.supersedes;
  if (typeof supersedes === 'string' && !isHex64(supersedes)) throw new UsageError('--supersedes must be an action hash (64 hex characters)');
  const c2paOut = typeof ctx.values.c2pa === 'string' ? ctx.values.c2pa : null;
  if (c2paOut !== null && ctx.positionals.length !== 1) throw new UsageError('--c2pa writes one copy: name exactly one FILE');
  if (c2paOut !== null && ctx.values['ai-generation'] === undefined) throw new UsageError('--c2pa needs --ai-generation (C2PA\'s created action declares its source)');
  const vault = await openVault(ctx.keyFile);
  const client = new ProvenantClient({ baseUrl: ctx.server });
  const progress = progressBar();
  const results = await signAndPublish(vault, {
    files: ctx.positionals,
    declaration: declarationOf(ctx.values),
    clientId: typeof ctx.values['client-id'] === 'string' ? ctx.values['client-id'] : null,
    client,
  }, {
    progress,
    approve: async (drafts, quota) => {
      process.stderr.write(`${visibleLines([`To sign as ${vault.key.agentPubKey} and publish to ${ctx.server}:`, ...drafts.flatMap(describeDraft), quotaLine(quota)])}\n`);
      return ctx.values.yes === true || confirm(`Sign and publish ${drafts.length} record${drafts.length === 1 ? '' : 's'}?`);
    },
  });
  const failed = results.filter((r) => r.error !== null);
  const summary = `${results.length - failed.length} published, ${failed.length} failed`;
  if (ctx.json) {
    process.stdout.write(`${terminalJson({ results: results.map(({ file, file_hash, action_hash }) => ({ file, file_hash, action_hash })) })}\n`);
    process.stderr.write(`${summary}\n`);
  } else {
    const lines = results.map((r) => `${r.action_hash ?? 'FAILED'.padEnd(64)}  ${r.file}${r.error ? `: ${r.error}` : ''}`);
    process.stdout.write(`${visibleLines([...lines, summary])}\n`);
  }
  for (const f of failed) process.stderr.write(`${visible(`provenant vault sign: ${f.file}: ${f.error}`)}\n`);
  const [only] = results;
  let manifestFailed = false;
  if (c2paOut !== null && only.action_hash !== null) {
    const store = await writeSignedCopy(vault, only.file, c2paOut, only.record, only.action_hash, ctx.server);
    process.stderr.write(`wrote ${visible(c2paOut)}: Content Credentials carrying the record, signed by this vault's key (readers report the signer untrusted: its certificate is self-issued)\n`);
    // issue 33: the repository keeps the manifest, so a stripped copy finds it again
    try {
      const stored = await client.publishManifest(store);
      process.stderr.write(`${visible(`published the manifest store ${stored.manifest_id} to ${ctx.server} (found again from stripped copies: POST /c2pa/v1/matches/byContent)`)}\n`);
    } catch (err) {
      manifestFailed = true;
      const shown = commandErrorOf(err, ctx.server);
      process.stderr.write(`${visible(`provenant vault sign: the manifest store was not published: ${shown instanceof Error ? shown.message : String(shown)}`)}\n`);
    }
  }
  return failed.length === 0 && !manifestFailed ? 0 : 1;
}

// ------------------------------------------------------------------ revoke, list, whoami

async function revoke(args: string[]): Promise<number> {
  const ctx = parse(args, { reason: { type: 'string' } });
  if (ctx.positionals.length !== 1 || !isHex64(ctx.positionals[0])) throw new UsageError('name one ACTION_HASH (64 hex characters)');
  const actionHash = ctx.positionals[0].toLowerCase();
  const vault = await openVault(ctx.keyFile);
  if (!ctx.values.yes && !(await confirm(`Revoke ${actionHash} as ${vault.key.agentPubKey} on ${ctx.server}?`))) throw new VaultCommandError('declined');
  const revocation = signRevocationOf(vault, actionHash, typeof ctx.values.reason === 'string' ? ctx.values.reason : null);
  try {
    await new ProvenantClient({ baseUrl: ctx.server }).publishRevocation(revocation);
  } catch (err) {
    throw commandErrorOf(err, ctx.server);
  }
  vault.state.append({ kind: 'revocation', revocation, server: ctx.server });
  out(ctx, { success: true, action_hash: actionHash }, [`revoked ${actionHash}`]);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const ctx = parse(args, {});
  noPositionals(ctx);
  const key = openKeyFile(ctx.keyFile); // no passphrase needed: nothing is signed
  const log = new VaultState(key.path).log();
  const revoked = new Map(log.flatMap((e) => (e.kind === 'revocation' ? [[e.revocation.action_hash, e.revocation]] as const : [])));
  const records = log.flatMap((e) => (e.kind === 'record' ? [e] : [])).map((e) => ({
    action_hash: e.action_hash, file: e.file, file_hash: e.record.file_hash, signed_at: e.record.signed_at, intent: e.record.intent,
    comment: e.record.comment, supersedes: e.record.supersedes, published: e.published, server: e.server,
    revoked: revoked.has(e.action_hash), revoked_at: revoked.get(e.action_hash)?.revoked_at ?? null,
  }));
  const lines = records.map((r) => `${r.action_hash}  ${new Date(r.signed_at).toISOString()}  ${r.published ? 'published' : 'unpublished'}${r.revoked ? ', revoked' : ''}${r.supersedes ? `, amends ${r.supersedes.slice(0, 12)}` : ''}  ${r.file ?? r.file_hash}`);
  out(ctx, { records }, records.length === 0 ? ['this vault has signed nothing yet'] : lines);
  return 0;
}

async function whoami(args: string[]): Promise<number> {
  const ctx = parse(args, {});
  noPositionals(ctx);
  const key = openKeyFile(ctx.keyFile);
  const session = new VaultState(key.path).session();
  const account = session ? { server: session.server, user_id: session.user_id, linked_at: session.linked_at } : null;
  out(ctx, { agent_pub_key: key.agentPubKey, did: key.did, key_file: key.path, encrypted: key.encrypted, account },
    [`agent key  ${key.agentPubKey}`, `DID        ${key.did}`, `key file   ${key.path} (${key.encrypted ? 'encrypted' : 'not encrypted'})`, `account    ${account ? `${account.user_id} on ${account.server}` : 'not linked (provenant vault link)'}`]);
  return 0;
}

// ------------------------------------------------------------------ link, quota

async function link(args: string[]): Promise<number> {
  const ctx = parse(args, { email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, 'password-file': { type: 'string' }, token: { type: 'string' } });
  noPositionals(ctx);
  const email = ctx.values.email as string | undefined;
  if (email !== undefined && !ctx.values['password-stdin'] && ctx.values['password-file'] === undefined) throw new UsageError('--email needs --password-stdin or --password-file');
  if (email !== undefined && ctx.values.token !== undefined) throw new UsageError('give --email or --token, not both');
  const vault = await openVault(ctx.keyFile);
  const client = new ProvenantClient({ baseUrl: ctx.server });
  try {
    // An account to link to: by password, or a session token the user already has.
    if (email !== undefined) {
      const password = ctx.values['password-stdin'] ? await nextLine() : readFileSync(String(ctx.values['password-file']), 'utf8').split('\n')[0];
      if (!password) throw new UsageError('no password given');
      client.token = (await client.login(email, password)).token;
    } else if (typeof ctx.values.token === 'string') {
      client.token = ctx.values.token;
    }
    if (client.token !== undefined) {
      const { challenge } = await client.vaultChallenge(vault.key.agentPubKey);
      await client.linkAgent(signChallenge(vault, challenge));
    }
    // The vault's own session (a first login without an account creates a device-hosted one).
    const { challenge } = await client.vaultChallenge(vault.key.agentPubKey);
    const session = await client.vaultToken(signChallenge(vault, challenge));
    vault.state.saveSession({ server: ctx.server, token: session.token, user_id: session.user.id, agent_pub_key: vault.key.agentPubKey, linked_at: new Date().toISOString() });
    out(ctx, { user_id: session.user.id, agent_pub_key: vault.key.agentPubKey, server: ctx.server },
      [`linked ${vault.key.agentPubKey} to account ${session.user.id} on ${ctx.server}; session kept in ${vault.state.sessionFile}`]);
  } catch (err) {
    throw commandErrorOf(err, ctx.server);
  }
  return 0;
}

async function quota(args: string[]): Promise<number> {
  const ctx = parse(args, { 'client-id': { type: 'string' } });
  noPositionals(ctx);
  const vault = await openVault(ctx.keyFile);
  const clientId = typeof ctx.values['client-id'] === 'string' ? ctx.values['client-id'] : null;
  const published = vault.state.log().filter((e) => e.kind === 'record' && e.published && e.server === ctx.server).length;
  let q: QuotaState;
  try {
    q = await new ProvenantClient({ baseUrl: ctx.server }).syncQuota(quotaSyncBody(vault, published, clientId));
  } catch (err) {
    throw commandErrorOf(err, ctx.server);
  }
  out(ctx, q, [`${quotaLine(q)}${q.allowed ? '' : `; blocked${q.upgrade_tier ? `, upgrade to ${q.upgrade_tier}` : ''}`}`]);
  return 0;
}

// ------------------------------------------------------------------ allow, serve

async function allow(args: string[]): Promise<number> {
  const ctx = parse(args, { remove: { type: 'boolean' } });
  const key = openKeyFile(ctx.keyFile);
  const state = new VaultState(key.path);
  const config = state.config();
  const origins = ctx.positionals.map((o) => {
    const origin = normalizeOrigin(o);
    if (origin === null) throw new UsageError(`${JSON.stringify(o)} is not an origin (scheme://host[:port])`);
    return origin;
  });
  if (origins.length > 0) {
    const set = new Set(config.allowed_origins);
    for (const o of origins) ctx.values.remove ? set.delete(o) : set.add(o);
    config.allowed_origins = [...set];
    state.saveConfig(config);
  }
  out(ctx, config, config.allowed_origins.length === 0 ? ['no web origin may call vault serve'] : config.allowed_origins);
  return 0;
}

/** The terminal's answers to sign requests, one at a time, in arrival order. */
function terminalApprovals(identity: string) {
  const queue: { request: PendingRequest; settle(a: Answer): void }[] = [];
  const show = (): void => {
    const head = queue[0];
    if (!head) return;
    const { request: r } = head;
    const c = r.content;
    // every field is the requesting app's text: one line each, nothing that moves the cursor
    process.stdout.write(visibleLines([
      '',
      `Request ${r.id} from ${r.origin ?? 'a local app (no web origin)'}`,
      `  file hash   ${c.file_hash}`,
      `  intent      ${c.intent}; AI generation ${c.ai_generation ?? 'not declared'}`,
      `  rights      ${rightsLine(c)}`,
      ...(c.comment !== null ? [`  comment     ${JSON.stringify(c.comment)}`] : []),
      ...(c.supersedes !== null ? [`  amends      ${c.supersedes}`] : []),
      `  publish     ${r.publish ? 'yes, from this device' : 'no: the signed record goes back to the app unpublished'}`,
      `Sign as ${identity}? [y/N] `,
    ]));
  };
  const answerHead = (line: string): void => {
    const head = queue.shift();
    if (!head) return;
    head.settle(/^\s*(y|yes)\s*$/i.test(line) ? 'approved' : 'declined');
    show();
  };
  const ask = (request: PendingRequest, timeoutMs: number): Promise<Answer> => new Promise((resolve) => {
    const entry = {
      request,
      settle: (a: Answer) => {
        clearTimeout(timer);
        process.stdout.write(`request ${request.id}: ${a}\n`);
        resolve(a);
      },
    };
    const timer = setTimeout(() => {
      const at = queue.indexOf(entry);
      if (at < 0) return;
      queue.splice(at, 1);
      entry.settle('timeout');
      if (at === 0) show();
    }, timeoutMs);
    queue.push(entry);
    if (queue.length === 1) show();
  });
  return { ask, answerHead };
}

async function serve(args: string[]): Promise<number> {
  const ctx = parse(args, { port: { type: 'string' }, 'allow-origin': { type: 'string', multiple: true }, 'approval-timeout': { type: 'string' } });
  noPositionals(ctx);
  const port = Number(ctx.values.port ?? VAULT_DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number');
  const timeoutS = Number(ctx.values['approval-timeout'] ?? VAULT_APPROVAL_TIMEOUT_MS / 1000);
  if (!(timeoutS > 0)) throw new UsageError('--approval-timeout must be a positive number of seconds');
  const key = openKeyFile(ctx.keyFile);
  const state = new VaultState(key.path);
  const extra = ((ctx.values['allow-origin'] as string[] | undefined) ?? []).map((o) => {
    const origin = normalizeOrigin(o);
    if (origin === null) throw new UsageError(`--allow-origin ${JSON.stringify(o)} is not an origin (scheme://host[:port])`);
    return origin;
  });
  if (extra.length > 0) state.saveConfig({ allowed_origins: [...new Set([...state.config().allowed_origins, ...extra])] });
  // An encrypted key opens from the environment or a hidden prompt on a terminal; else the vault starts locked and its first line unlocks it.
  let privateKey: Uint8Array | null = null;
  const passphrase = process.env.PROVENANT_VAULT_PASSPHRASE || (key.encrypted && process.stdin.isTTY ? await readPassphrase(`Passphrase for ${key.path}: `) : null);
  if (!key.encrypted || passphrase) privateKey = key.unlock(passphrase ?? undefined);
  const approvals = terminalApprovals(key.agentPubKey);
  const service = await startVaultService({
    key, state, privateKey, port, ask: approvals.ask, client: new ProvenantClient({ baseUrl: ctx.server }), approvalTimeoutMs: timeoutS * 1000,
  });
  let locked = privateKey === null;
  onLines((line) => {
    if (!locked) return approvals.answerHead(line);
    try {
      service.unlock(key.unlock(line));
      locked = false;
      process.stdout.write('vault unlocked\n');
    } catch (err) {
      process.stdout.write(`${visible((err as Error).message)}\n`);
    }
  });
  const origins = state.config().allowed_origins;
  process.stdout.write(`${visibleLines([`vault serving ${key.agentPubKey} on ${service.url}${locked ? ' (locked: type the passphrase)' : ''}`,
    `web origins allowed: ${origins.length > 0 ? origins.join(', ') : 'none (provenant vault allow ORIGIN)'}; Ctrl-C stops`])}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await service.close();
  return 0;
}

// ------------------------------------------------------------------ dispatch

/** The flag that sets a record field (`content_rights.license` -> `--license`). */
function flagOf(field: string): string {
  return `--${field.replace(/^content_rights\./, '').replaceAll('_', '-')}`;
}

const SUBCOMMANDS: Record<string, (args: string[]) => Promise<number>> = { init, sign, revoke, list, whoami, link, quota, serve, allow };

export const run: Command = async (args) => {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || rest.includes('--help') || rest.includes('-h')) {
    if (name === undefined) {
      process.stderr.write(`provenant vault: no command given\n${USAGE}`);
      return USAGE_ERROR;
    }
    process.stdout.write(USAGE);
    return 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  try {
    if (subcommand === undefined) throw new UsageError(`unknown command "${name}"`);
    return await subcommand(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${visible(`provenant vault ${name}: ${err.message}`)}\n${USAGE}`);
      return USAGE_ERROR;
    }
    if (err instanceof InvalidFieldError) {
      process.stderr.write(`${visible(`provenant vault ${name}: ${flagOf(err.field)}: ${err.message}`)}\n`);
      return USAGE_ERROR;
    }
    if (err instanceof VaultCommandError) {
      process.stderr.write(`${visible(`provenant vault ${name}: ${(err as Error).message}`)}\n`);
      return 1;
    }
    throw err;
  } finally {
    closeStdin();
  }
};
