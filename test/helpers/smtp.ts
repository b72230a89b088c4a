// A real SMTP server on loopback (smtp-server) that keeps every message it is given, for
// the suites that send mail over SMTP. smtp-server's built-in STARTTLS certificate is
// expired, so it speaks plain SMTP (STARTTLS and AUTH disabled): loopback only.
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  /** The envelope's sender and recipients, as the client gave them. */
  from: string;
  to: string[];
  /** The message as received (headers and body). */
  data: string;
}

export interface SmtpCapture {
  /** `smtp://127.0.0.1:PORT`, for PROVENANT_SMTP_URL. */
  url: string;
  mails: CapturedMail[];
  close(): Promise<void>;
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: (session.envelope.mailFrom as { address: string }).address,
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
