// The contact relay's sender (spec 4.13; decisions.md 10): a long-lived part that drains
// the durable queue in the background and sends each request through the server's one
// mail transport (../mail/transport.ts: SMTP, or .eml files in $DATA_DIR/outbox).
// From is the service's address, To the signer (their own address alone: a message
// without To scores as spam, SpamAssassin's MISSING_HEADERS), Reply-To the sender; no
// Cc or Bcc, and no other address anywhere, so the sender never sees the signer's
// address unless the signer replies.
import type { Config } from '../config.js';
import { contactRecipient, type ContactQueueWaker } from '../domain/contact.js';
import type { Logger } from '../log.js';
import type { MailMessage, MailTransport } from '../mail/transport.js';
import type { QueuedContactRequest, Store } from '../store/index.js';

/** How often the queue is looked at without a wake (retries, requests queued by another node). */
const POLL_MS = 5_000;
/** A claimed request is the drainer's for this long (longer than one SMTP exchange may take). */
const LEASE_MS = 120_000;
/** Requests claimed at once. */
const BATCH = 10;
/** Failed attempts before a request is given up (about 4 hours of retries). */
const MAX_ATTEMPTS = 9;
/** The first retry's delay; each further one doubles it. */
const RETRY_BASE_MS = 30_000;

const PURPOSE_WORDS: Record<QueuedContactRequest['purpose'], string> = {
  licensing: 'licensing',
  ai_training: 'AI training',
  collaboration: 'collaboration',
  other: 'other',
};

/**
 * The message for one request. Every value from the sender is already header-safe (no
 * control characters: public/schema.ts); nodemailer encodes the display name and subject.
 */
export function contactMail(request: QueuedContactRequest, to: string, from: string): MailMessage {
  // the hash on a line of its own: 64 characters stay unbroken in quoted-printable
  const about = request.fileHash === null ? ['about your Provenant creator profile.'] : ['about your signed file (SHA-256):', request.fileHash];
  const text = [
    `${request.senderName} sent you a message through the Provenant contact relay`,
    ...about,
    `Purpose: ${PURPOSE_WORDS[request.purpose]}`,
    '',
    request.message,
    '',
    '--',
    'Replying to this e-mail answers the sender directly, from your own address.',
    'The relay did not show them your address, and keeps no copy of this message.',
  ].join('\n');
  return {
    from: { name: 'Provenant contact relay', address: from },
    to,
    replyTo: { name: request.senderName, address: request.senderEmail },
    envelope: { from, to },
    subject: `Contact request (${PURPOSE_WORDS[request.purpose]}) about ${request.fileHash === null ? 'your profile' : 'your signed file'}`,
    text,
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}

export class ContactRelay implements ContactQueueWaker {
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private closed = false;
  /** Requests sent, dropped (no opt-in, unknown signer, no address, given up) and failed attempts since start. */
  readonly counts = { sent: 0, dropped: 0, failed: 0 };

  constructor(
    /** `mail`: the server's transport, closed by its owner (the composition root), not here. */
    private readonly deps: { store: Store; config: Pick<Config, 'mailFrom'>; log: Logger; mail: MailTransport },
    private readonly now: () => number = Date.now,
  ) {}

  get transport(): 'smtp' | 'outbox' {
    return this.deps.mail.kind;
  }

  /** Starts polling and drains what a previous run left queued. */
  start(): void {
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Drains soon, off the caller's path; a wake while draining runs one more pass. */
  wake(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .catch((err: Error) => this.deps.log.error('contact relay: draining failed', { error: err.message }))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once the queue holds nothing due (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const now = this.now();
      const batch = await this.deps.store.contacts.claimDue(now, now + LEASE_MS, BATCH);
      for (const request of batch) await this.deliver(request);
      if (batch.length < BATCH) return;
    }
  }

  private async deliver(request: QueuedContactRequest): Promise<void> {
    const { store, config, log } = this.deps;
    const recipient = await contactRecipient(store, request);
    if ('dropped' in recipient) {
      this.counts.dropped += 1;
      log.debug('contact relay: request dropped', { id: request.id, reason: recipient.dropped });
      await store.contacts.complete(request.id);
      return;
    }
    try {
      await this.deps.mail.send(contactMail(request, recipient.to, config.mailFrom), String(request.id));
      this.counts.sent += 1;
      log.info('contact relay: message sent', { id: request.id, transport: this.deps.mail.kind });
      await store.contacts.complete(request.id);
    } catch (err) {
      this.counts.failed += 1;
      const error = err instanceof Error ? err.message : String(err);
      if (request.attempts + 1 >= MAX_ATTEMPTS) {
        this.counts.dropped += 1;
        log.error('contact relay: giving up on a message', { id: request.id, attempts: request.attempts + 1, error });
        await store.contacts.complete(request.id);
        return;
      }
      const retryAt = this.now() + RETRY_BASE_MS * 2 ** request.attempts;
      log.warn('contact relay: sending failed, will retry', { id: request.id, attempts: request.attempts + 1, retry_at: retryAt, error });
      await store.contacts.retryLater(request.id, retryAt, error.slice(0, 500));
    }
  }

  /** Stops polling and lets a pass in progress finish (the transport is its owner's to close). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.idle();
  }
}
