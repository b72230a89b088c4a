// The address-verification mail (domain/email-verification.ts): a long-lived part that
// issues a link and sends it through the server's mail transport off the request path.
// Registration and the resend endpoint hand it a user and answer at once; a send that
// fails is logged and counted, and the user asks for a new link (the token exists only
// in the message, never at rest, so there is nothing to retry from). Sends in flight are
// awaited on close.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { Secrets } from '../secrets.js';
import { issueEmailVerification, needsVerification, verificationLink, type VerificationMailQueue } from '../domain/email-verification.js';
import type { Logger } from '../log.js';
import type { Store, User } from '../store/index.js';
import type { MailMessage, MailTransport } from './transport.js';

/** The message: the link on a line of its own, when it stops working, and why it came. */
export function verificationMail(to: string, link: string, from: string): MailMessage {
  const text = [
    'Please confirm that this is your e-mail address by opening this link:',
    '',
    link,
    '',
    'The link works once, for 24 hours. Once your address is confirmed, apps you allow',
    'to see your e-mail address can be told it is verified.',
    '',
    '--',
    'You get this message because this address was used for a Provenant account.',
    'If that was not you, ignore it: nothing happens unless the link is opened.',
  ].join('\n');
  return {
    from: { name: 'Provenant', address: from },
    to,
    subject: 'Confirm your e-mail address for Provenant',
    text,
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}

export class VerificationMailer implements VerificationMailQueue {
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  /** Messages sent and sends that failed since start. */
  readonly counts = { sent: 0, failed: 0 };

  constructor(
    /** `mail`: the server's transport, closed by its owner (the composition root). */
    private readonly deps: { store: Store; secrets: Secrets; config: Pick<Config, 'baseUrl' | 'mailFrom'>; log: Logger; mail: MailTransport },
    private readonly now: () => number = Date.now,
  ) {}

  get pending(): number {
    return this.inFlight.size;
  }

  /** Sends the user a new link soon, off the caller's path; nothing for an address verified already. */
  queue(user: User): void {
    if (this.closed || !needsVerification(user)) return;
    const sending: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.send(user))
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  private async send(user: User & { email: string }): Promise<void> {
    const { config, log, mail } = this.deps;
    try {
      const { token } = await issueEmailVerification(this.deps, user, this.now());
      await mail.send(verificationMail(user.email, verificationLink(config.baseUrl, token), config.mailFrom), `verify-${randomBytes(6).toString('hex')}`);
      this.counts.sent += 1;
      log.info('verification mail sent', { user_id: user.id, transport: mail.kind });
    } catch (err) {
      this.counts.failed += 1;
      log.warn('verification mail not sent; the user may ask for another', { user_id: user.id, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Resolves once every send queued so far has ended (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Takes no more and waits for the sends in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }
}
