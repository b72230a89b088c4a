// A witness (c2sp.org/tlog-witness): the `add-checkpoint` rules as an ordered list of
// checks, each naming the status the spec gives it, over a store of the latest
// checkpoint it cosigned per origin. No HTTP and no file system here (witness-server.ts
// has both), so the checks can be tested alone and run anywhere.
//
// Check and update are atomic per origin (the spec's rollback race): requests for one
// origin run one after another, and the new state is stored durably before answering.
import { sha256Hex } from '../sha256.js';
import { parseCheckpoint } from './checkpoint.js';
import { TlogError } from './errors.js';
import { EMPTY_ROOT, encodeBase64, hashEqual, parseHash } from './hash.js';
import { verifyConsistency } from './merkle.js';
import {
  SIG_COSIGNATURE_V1, SIG_ED25519, formatNote, formatSignatureLine, noteSigner, openNote, parseNote, parseSignatureLines, parseVerifierKey, signatures,
  verifierOf, type NoteSignature, type NoteSigner, type NoteVerifier,
} from './note.js';

/** The latest checkpoint a witness cosigned for one origin. */
export interface WitnessRecord {
  readonly size: number;
  readonly rootHash: Uint8Array;
  /** The checkpoint with the log's verified signature(s) and the witness's cosignature. */
  readonly checkpoint: string;
}

/** Where a witness keeps its records; put must be durable when it resolves. */
export interface WitnessStore {
  get(origin: string): Promise<WitnessRecord | null>;
  put(origin: string, record: WitnessRecord): Promise<void>;
}

export interface WitnessOptions {
  /** The witness's name (its cosignature key name), e.g. `witness.example/w1`. */
  name: string;
  /** Its 32-byte Ed25519 seed. */
  seed: Uint8Array;
  /** Verifier keys (type 0x01) of the logs it witnesses, as strings or parsed; a key's name is its log's origin. */
  logs: readonly (string | NoteVerifier)[];
  store: WitnessStore;
  /** POSIX seconds, for the cosignature timestamp. */
  now?: () => number;
}

/** An HTTP answer, as tlog-witness specifies it. */
export interface WitnessResponse {
  status: 200 | 400 | 403 | 404 | 409 | 422;
  contentType: string;
  body: string;
}

/** A client may send at most 63 consistency proof lines (tlog-witness). */
const MAX_PROOF_LINES = 63;
const TEXT = 'text/plain; charset=utf-8';
const DECIMAL = /^(0|[1-9][0-9]*)$/;

const answer = (status: WitnessResponse['status'], body: string, contentType = TEXT): WitnessResponse => ({ status, contentType, body: body.endsWith('\n') ? body : `${body}\n` });

/** The parts of an add-checkpoint body. */
interface AddCheckpointRequest { oldSize: number; proof: Uint8Array[]; note: string }

/** Parses `old <n>\n`, up to 63 base64 proof lines, a blank line, and the checkpoint; null when malformed. */
function parseRequest(body: string): AddCheckpointRequest | null {
  const blank = body.indexOf('\n\n');
  if (blank < 0) return null;
  const head = body.slice(0, blank).split('\n');
  const old = head[0];
  if (!old.startsWith('old ') || !DECIMAL.test(old.slice(4))) return null;
  const oldSize = Number(old.slice(4));
  if (!Number.isSafeInteger(oldSize)) return null;
  const lines = head.slice(1);
  if (lines.length > MAX_PROOF_LINES) return null;
  const proof: Uint8Array[] = [];
  for (const l of lines) {
    try {
      proof.push(parseHash(l));
    } catch {
      return null;
    }
  }
  return { oldSize, proof, note: body.slice(blank + 2) };
}

export class Witness {
  readonly name: string;
  /** The witness's cosignature verifier key (type 0x04). */
  readonly verifierKey: string;
  private readonly cosigner: NoteSigner;
  private readonly store: WitnessStore;
  private readonly logs = new Map<string, NoteVerifier[]>();
  private readonly originByHash = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(options: WitnessOptions) {
    this.name = options.name;
    this.store = options.store;
    this.cosigner = noteSigner(options.name, SIG_COSIGNATURE_V1, options.seed, options.now);
    this.verifierKey = verifierOf(options.name, SIG_COSIGNATURE_V1, options.seed).vkey;
    for (const vkey of options.logs) {
      const v = typeof vkey === 'string' ? parseVerifierKey(vkey) : vkey;
      if (v.type !== SIG_ED25519) throw new TlogError('malformed_key', `the log key ${v.name} is not an Ed25519 (0x01) key`);
      const list = this.logs.get(v.name) ?? [];
      list.push(v);
      this.logs.set(v.name, list);
      this.originByHash.set(sha256Hex(v.name), v.name);
    }
    if (this.logs.size === 0) throw new TlogError('malformed_key', 'a witness needs at least one log key');
  }

  /** The origins this witness cosigns for. */
  get origins(): string[] {
    return [...this.logs.keys()];
  }

  /** Runs `fn` after every earlier call for `origin` settled. */
  private serialized<T>(origin: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(origin) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(origin, tail);
    void tail.then(() => {
      if (this.queues.get(origin) === tail) this.queues.delete(origin);
    });
    return run;
  }

  /** `POST <prefix>/add-checkpoint` with `body` (tlog-witness "add-checkpoint"). */
  async addCheckpoint(body: string): Promise<WitnessResponse> {
    const req = typeof body === 'string' ? parseRequest(body) : null;
    if (req === null) return answer(400, 'malformed add-checkpoint request');
    let text: string;
    try {
      text = parseNote(req.note).text;
    } catch {
      return answer(400, 'malformed checkpoint note');
    }
    const origin = text.slice(0, text.indexOf('\n'));
    const keys = this.logs.get(origin);
    // unknown origin: 404
    if (keys === undefined) return answer(404, 'unknown log origin');
    // no signature of a trusted key, or a trusted key's signature that fails: 403
    let logSignatures: NoteSignature[];
    try {
      logSignatures = openNote(req.note, keys).verified.map(({ name, keyId, signature }) => ({ name, keyId, signature }));
    } catch (e) {
      if (e instanceof TlogError && (e.code === 'bad_signature' || e.code === 'no_verified_signature')) return answer(403, 'the checkpoint is not signed by the log key');
      // a log key's signature line repeated: refused before any is verified (openNote), with
      // the status the spec gives a trusted key's line that cannot be accepted
      if (e instanceof TlogError && e.code === 'repeated_signature') return answer(403, 'the checkpoint repeats a signature of the log key');
      return answer(400, 'malformed checkpoint note');
    }
    let size: number;
    let rootHash: Uint8Array;
    try {
      ({ size, rootHash } = parseCheckpoint(text));
    } catch {
      return answer(400, 'malformed checkpoint');
    }
    // the old size above the checkpoint's: 400
    if (req.oldSize > size) return answer(400, 'the old size is above the checkpoint size');
    return this.serialized(origin, async () => {
      const latest = await this.store.get(origin);
      const latestSize = latest?.size ?? 0;
      // not the size of the latest cosigned checkpoint: 409, with that size
      if (req.oldSize !== latestSize) return answer(409, `${latestSize}\n`, 'text/x.tlog.size');
      // a size-0 checkpoint must have the empty tree's root: 422
      if (size === 0 && !hashEqual(rootHash, EMPTY_ROOT)) return answer(422, 'a tree of size 0 must have the empty root');
      if (req.oldSize === 0) {
        // from nothing, nothing to prove: a proof is an error (422)
        if (req.proof.length !== 0) return answer(422, 'a consistency proof from size 0 must be empty');
      } else if (req.oldSize === size) {
        // the same size again: the same root (422 otherwise)
        if (req.proof.length !== 0 || !hashEqual(latest!.rootHash, rootHash)) return answer(422, 'the same tree size with another root');
      } else {
        try {
          verifyConsistency(req.oldSize, size, req.proof, latest!.rootHash, rootHash);
        } catch {
          return answer(422, 'the consistency proof does not verify');
        }
      }
      const [cosignature] = signatures(text, [this.cosigner]);
      await this.store.put(origin, { size, rootHash, checkpoint: formatNote(text, [...logSignatures, cosignature]) });
      return answer(200, formatSignatureLine(cosignature));
    });
  }

  /** `GET <prefix>/<origin hash>/checkpoint`: the latest cosigned checkpoint of a log, or 404. */
  async latestCheckpoint(originHash: string): Promise<WitnessResponse> {
    const origin = this.originByHash.get(originHash);
    const record = origin === undefined ? null : await this.store.get(origin);
    if (record === null) return answer(404, 'no checkpoint cosigned for that origin');
    return { status: 200, contentType: TEXT, body: record.checkpoint };
  }

}

// ---------------------------------------------------------------- the log's side

/** The body of an add-checkpoint request: `old <n>`, the consistency proof lines, a blank line, the checkpoint. */
export function formatAddCheckpoint(oldSize: number, proof: readonly Uint8Array[], checkpoint: string): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new TlogError('bad_index', 'the old size must be a non-negative integer');
  if (proof.length > MAX_PROOF_LINES) throw new TlogError('consistency_failed', 'a consistency proof of more than 63 hashes');
  parseNote(checkpoint);
  return `old ${oldSize}\n${proof.map((h) => `${encodeBase64(h)}\n`).join('')}\n${checkpoint}`;
}

/**
 * The cosignatures of a witness's 200 answer to `checkpoint`, verified with the witness's
 * key (tlog-witness: the client MUST ignore cosignatures from unknown keys); throws a
 * TlogError when the answer is malformed, holds a bad signature of that key, or none.
 */
export function cosignaturesFrom(answer: string, checkpoint: string, witnessKey: string | NoteVerifier): NoteSignature[] {
  const key = typeof witnessKey === 'string' ? parseVerifierKey(witnessKey) : witnessKey;
  const { text } = parseNote(checkpoint);
  const lines = parseSignatureLines(answer);
  const opened = openNote(formatNote(text, lines), [key]);
  return opened.verified.map(({ name, keyId, signature }) => ({ name, keyId, signature }));
}

/** The size in a 409 answer (`text/x.tlog.size`: a decimal and a newline), or null when it is not one. */
export function parseConflictSize(body: string): number | null {
  const m = /^(0|[1-9][0-9]*)\n$/.exec(body);
  return m !== null && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : null;
}
