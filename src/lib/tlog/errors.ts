// The one error type of the transparency-log library. Every refusal (a proof that does
// not verify, a malformed note, a checkpoint without the signatures a policy needs) is a
// TlogError with a stable code, so callers (the server, the CLI, the page) can tell
// them apart without reading messages.

export type TlogErrorCode =
  | 'malformed_hash'
  | 'bad_index'
  | 'inclusion_failed'
  | 'consistency_failed'
  | 'malformed_tile'
  | 'malformed_tile_path'
  | 'missing_hash'
  | 'malformed_note'
  | 'malformed_key'
  | 'bad_signature'
  | 'repeated_signature'
  | 'no_verified_signature'
  | 'malformed_checkpoint'
  | 'unknown_origin'
  | 'quorum_not_met'
  | 'malformed_proof_bundle';

export class TlogError extends Error {
  override name = 'TlogError';
  readonly code: TlogErrorCode;

  constructor(code: TlogErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
