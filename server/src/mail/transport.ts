// The one mail transport of a server (decisions.md 10), shared by everything that sends
// mail (the contact relay, the address-verification mail): nodemailer over SMTP when
// PROVENANT_SMTP_URL is set, else each message written to $DATA_DIR/outbox as an .eml
// file with its envelope beside it, for an operator's mail tool to pick up. Built once
// by the composition root and closed there, after every sender that uses it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Config } from '../config.js';

export type MailMessage = Mail.Options;

/** Sends one message: over SMTP, or into the outbox directory. */
export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  /** Resolves once the message is accepted (SMTP) or written (outbox); `label` names the outbox file. */
  send(message: MailMessage, label: string): Promise<void>;
  close(): void;
}

function smtpTransport(url: string): MailTransport {
  const transport = nodemailer.createTransport(url);
  return {
    kind: 'smtp',
    send: async (message) => {
      await transport.sendMail(message);
    },
    close: () => transport.close(),
  };
}

/**
 * The outbox: each message as `<time>-<label>.eml` (RFC 5322, as nodemailer would send
 * it) and its envelope beside it as `<time>-<label>.envelope.json`, both 0600 in a 0700
 * directory.
 */
function outboxTransport(dir: string): MailTransport {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'outbox',
    async send(message, label) {
      const info = await transport.sendMail(message);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const name = `${Date.now()}-${label}`;
      writeFileSync(join(dir, `${name}.envelope.json`), JSON.stringify(info.envelope) + '\n', { mode: 0o600, flag: 'w' });
      writeFileSync(join(dir, `${name}.eml`), info.message as Buffer, { mode: 0o600, flag: 'w' });
    },
    close: () => transport.close(),
  };
}

/** SMTP with PROVENANT_SMTP_URL, else the outbox in the data directory. */
export function createMailTransport(config: Pick<Config, 'smtpUrl' | 'dataDir'>): MailTransport {
  return config.smtpUrl !== null ? smtpTransport(config.smtpUrl) : outboxTransport(join(config.dataDir, 'outbox'));
}
