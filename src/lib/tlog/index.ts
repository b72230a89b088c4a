// The transparency log library (docs/transparency-log.md): RFC 9162 hashing and proofs,
// c2sp.org tiles, signed notes, checkpoints, cosignatures, proof bundles and the
// witness's rules. No Node built-in: the same module runs in the browser build.
export { TlogError } from './errors.js';
export type { TlogErrorCode } from './errors.js';
export { HASH_SIZE, EMPTY_ROOT, leafHash, leafHashInto, nodeHash, perfectRoot, hashEqual, encodeBase64, decodeBase64, parseHash } from './hash.js';
export { verifyInclusion, verifyConsistency, proveInclusion, proveConsistency, treeHash, rangeSubtrees } from './merkle.js';
export type { SubtreeCoord, HashReader } from './merkle.js';
export {
  TILE_HEIGHT, TILE_WIDTH, TILE_BYTES, MAX_ENTRY_BYTES,
  tileWidthAt, partialTiles, newTiles, encodeTileIndex, tilePath, entriesPath, parseTilePath,
  encodeEntryBundle, decodeEntryBundle, tileHashReader, TileBuilder, rootFromLevel0Tiles,
} from './tiles.js';
export type { TileCoord, TileData, TileReader, ParsedTilePath, TileBuilderOptions } from './tiles.js';
export {
  SIG_ED25519, SIG_COSIGNATURE_V1, MAX_NOTE_SIGNATURES, MAX_NOTE_LENGTH,
  isValidKeyName, keyId, formatVerifierKey, parseVerifierKey, noteSigner, verifierOf, generateSignerKey, formatSignerKey, parseSignerKey,
  cosignedMessage, cosignatureTimestamp, formatSignatureLine, formatNote, signatures, signNote, parseSignatureLines, parseNote, openNote,
} from './note.js';
export type { SignatureType, NoteVerifier, NoteSigner, NoteSignature, VerifiedSignature, OpenedNote } from './note.js';
export { formatCheckpoint, parseCheckpoint, signCheckpoint, verifyCheckpoint } from './checkpoint.js';
export type { Checkpoint, CheckpointPolicy, VerifiedCheckpoint } from './checkpoint.js';
export { PROOF_BUNDLE_HEADER, formatProofBundle, parseProofBundle, verifyProofBundle, buildProofBundle } from './proof-bundle.js';
export type { ProofBundle, VerifiedProofBundle } from './proof-bundle.js';
export { Witness, formatAddCheckpoint, cosignaturesFrom, parseConflictSize } from './witness.js';
export type { WitnessOptions, WitnessRecord, WitnessStore, WitnessResponse } from './witness.js';
