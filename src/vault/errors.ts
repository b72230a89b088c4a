// Every way a vault command fails, once, with its message: the CLI prints the message
// and exits 1. (Failures of the local signing service to its clients are the SDK's
// VAULT_FAILURES, shared by both ends.)
export const VAULT_COMMAND_FAILURES = {
  no_key_file: 'no key file at %s: create one with `provenant vault init` (or name one with --key / $PROVENANT_VAULT_KEY)',
  key_file_exists: 'a key file exists at %s: vault init never overwrites one',
  key_file_invalid: 'the key file %s is not a Provenant vault key',
  key_file_exposed: 'the key file %s can be read by other users (mode %s): run chmod 600 on it',
  wrong_passphrase: 'wrong passphrase for the key file %s',
  passphrase_needed: 'the key file %s is encrypted: set $PROVENANT_VAULT_PASSPHRASE or run in a terminal to type it',
  unreachable: 'cannot reach the server: %s',
  not_linked: 'this identity has no account on %s yet: run `provenant vault link` first',
  over_quota: 'over quota: %s',
  tampered: 'refused: %s',
  declined: 'nothing signed: not approved',
  unreadable_file: 'cannot read %s: %s',
  server_refused: 'the server refused: %s',
} as const;
export type VaultCommandFailure = keyof typeof VAULT_COMMAND_FAILURES;

/** A vault command that cannot go on; `message` is the table's, its %s filled in order. */
export class VaultCommandError extends Error {
  override readonly name = 'VaultCommandError';
  readonly code: VaultCommandFailure;
  constructor(code: VaultCommandFailure, ...details: string[]) {
    let i = 0;
    super(VAULT_COMMAND_FAILURES[code].replace(/%s/g, () => details[i++] ?? ''));
    this.code = code;
  }
}
