// Sending checkpoints to the log's witnesses (tlog-witness add-checkpoint;
// docs/transparency-log.md). The witnesses are named by the operator
// (PROVENANT_LOG_WITNESSES), never by a client, so unlike webhooks they may be on
// loopback or a private network (a witness beside the server is a normal set-up): the
// outbound rules that do apply are the ones that bound what a witness can do to us. One
// deadline covers DNS, connect, TLS and the answer; no redirect is followed; at most
// WITNESS_ANSWER_LIMIT bytes of an answer are read; a fresh connection per request.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { cosignaturesFrom, formatAddCheckpoint, parseConflictSize, type NoteSignature } from 'provenant';
import type { LogWitnessConfig } from '../config.js';

/** A witness has this long to answer one checkpoint, its 409 retry included. */
export const WITNESS_DEADLINE_MS = 3_000;
/** Bytes of a witness's answer read (a cosignature line is about 150). */
export const WITNESS_ANSWER_LIMIT = 64 * 1024;

export type WitnessOutcome =
  | { ok: true; cosignatures: NoteSignature[] }
  | { ok: false; error: string; status?: number };

/** Makes the consistency proof from `oldSize` to the checkpoint's size. */
export type ProveFrom = (oldSize: number) => Promise<Uint8Array[]>;

/** One witness: what it last cosigned (in memory; a restart learns it back from the witness's 409). */
export class WitnessClient {
  /** The size it last cosigned, as far as we know (0: nothing known). */
  lastSize = 0;
  lastError: string | null = null;
  /** When it was last sent a checkpoint (ms). */
  lastAttempt = 0;

  constructor(
    readonly config: LogWitnessConfig,
    private readonly deadlineMs = WITNESS_DEADLINE_MS,
  ) {}

  /**
   * Sends `checkpoint` (of `size`) with a proof from the size it last cosigned; on 409,
   * once more from the size it answers. Never throws.
   */
  async addCheckpoint(checkpoint: string, size: number, prove: ProveFrom, signal?: AbortSignal): Promise<WitnessOutcome> {
    this.lastAttempt = Date.now();
    const deadline = AbortSignal.timeout(this.deadlineMs);
    const both = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const outcome = await this.attempt(checkpoint, size, prove, both, 2).catch((err: unknown): WitnessOutcome => {
      const error = deadline.aborted ? `no answer within ${this.deadlineMs} ms` : err instanceof Error ? err.message : String(err);
      return { ok: false, error };
    });
    this.lastError = outcome.ok ? null : outcome.error;
    if (outcome.ok) this.lastSize = size;
    return outcome;
  }

  private async attempt(checkpoint: string, size: number, prove: ProveFrom, signal: AbortSignal, tries: number): Promise<WitnessOutcome> {
    const oldSize = this.lastSize <= size ? this.lastSize : 0;
    const body = formatAddCheckpoint(oldSize, oldSize === 0 ? [] : await prove(oldSize), checkpoint);
    const { status, text } = await post(`${this.config.url}/add-checkpoint`, body, signal);
    if (status === 200) return { ok: true, cosignatures: cosignaturesFrom(text, checkpoint, this.config.vkey) };
    if (status === 409) {
      const theirs = parseConflictSize(text);
      if (theirs === null) return { ok: false, status, error: 'answered 409 without a size' };
      if (theirs > size) return { ok: false, status, error: `has cosigned size ${theirs}, above this checkpoint's ${size}` };
      this.lastSize = theirs;
      if (tries > 1) return this.attempt(checkpoint, size, prove, signal, tries - 1);
    }
    return { ok: false, status, error: `answered ${status}: ${text.slice(0, 200).trim()}` };
  }
}

function post(url: string, body: string, signal: AbortSignal): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const bytes = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { method: 'POST', agent: false, signal, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(bytes.length) } },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > WITNESS_ANSWER_LIMIT) {
            res.destroy();
            reject(new Error(`answered more than ${WITNESS_ANSWER_LIMIT} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}
