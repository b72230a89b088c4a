// An unlocked vault: the key file's identity with its private key, and the files kept
// beside it. Everything a vault signs goes through here: records, revocations, login
// challenges and quota-sync messages (decisions.md 2 and 5).
import { signBytes, toBase64, quotaSyncMessage } from '../lib/identity.js';
import { actionHash, recordOf, signRecord, signRevocation, type RecordContent, type RevocationEntry, type SignedRecord } from '../lib/records.js';
import { openKeyFile, type KeyFile } from './keyfile.js';
import { readPassphrase } from './prompt.js';
import { VaultState } from './state.js';

export interface Vault {
  key: KeyFile;
  privateKey: Uint8Array;
  state: VaultState;
}

/**
 * Opens and unlocks the vault of `keyFile`: an encrypted key takes its passphrase from
 * $PROVENANT_VAULT_PASSPHRASE, else from a prompt (stdin's next line when piped).
 */
export async function openVault(keyFile: string, env: NodeJS.ProcessEnv = process.env): Promise<Vault> {
  const key = openKeyFile(keyFile);
  let passphrase: string | undefined;
  if (key.encrypted) passphrase = env.PROVENANT_VAULT_PASSPHRASE || ((await readPassphrase(`Passphrase for ${keyFile}: `)) ?? undefined);
  return { key, privateKey: key.unlock(passphrase), state: new VaultState(keyFile) };
}

/** A record of `content` signed now by the vault's identity, with its action hash. */
export function signContent(vault: Vault, content: RecordContent, now = Date.now()): { record: SignedRecord; action_hash: string } {
  const record = recordOf(content, vault.key.agentPubKey, now);
  const { signature, action_hash } = signRecord(record, vault.privateKey);
  return { record: { ...record, signature }, action_hash };
}

/** The action hash a signed record must have, recomputed here (a server's answer is compared with it). */
export function actionHashOf(signed: SignedRecord): string {
  const { signature, ...record } = signed;
  return actionHash(record, signature);
}

/** A revocation of `actionHashToRevoke` signed now (decisions.md 2, publish-revocation). */
export function signRevocationOf(vault: Vault, actionHashToRevoke: string, reason: string | null, now = Date.now()): RevocationEntry & { signature: string } {
  const entry: RevocationEntry = { action_hash: actionHashToRevoke, reason, revoked_at: now, signer: vault.key.agentPubKey };
  return { ...entry, signature: signRevocation(entry, vault.privateKey) };
}

/** The base64 signature of a login challenge's UTF-8 bytes (decisions.md 5). */
export function signChallenge(vault: Vault, challenge: string): { challenge: string; agent_pub_key: string; signature: string } {
  return { challenge, agent_pub_key: vault.key.agentPubKey, signature: toBase64(signBytes(vault.privateKey, new TextEncoder().encode(challenge))) };
}

/** The body of `POST S:/quota/sync-by-agent`: `count` records this vault published, signed (hex) now. */
export function quotaSyncBody(vault: Vault, count: number, clientId: string | null, now = Date.now()) {
  const message = quotaSyncMessage(vault.key.agentPubKey, now, count, clientId);
  const signature = Buffer.from(signBytes(vault.privateKey, new TextEncoder().encode(message))).toString('hex');
  return { agent_pub_key: vault.key.agentPubKey, count, timestamp: now, signature, ...(clientId ? { client_id: clientId } : {}) };
}
