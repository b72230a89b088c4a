// `provenant serve`: validated configuration from the environment, then the server;
// SIGTERM/SIGINT stop it gracefully (stop accepting, finish in-flight requests, close
// the pool and the database).
import { parseArgs } from 'node:util';
import { visible } from 'provenant';
import { ConfigError, loadConfig } from '../config.js';
import { startServer } from '../serve.js';

export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const USAGE = 'usage: provenant serve [--port N] [--host H] [--data-dir DIR]\n';

/** Runs until a signal stops the server; resolves with the exit code. */
export async function serve(argv: string[], io: CliIo = process): Promise<number> {
  let values: { port?: string; host?: string; 'data-dir'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (err) {
    io.stderr.write(`provenant serve: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const env = { ...process.env };
  if (values.port !== undefined) env.PORT = values.port;
  if (values.host !== undefined) env.HOST = values.host;
  if (values['data-dir'] !== undefined) env.PROVENANT_DATA_DIR = values['data-dir'];

  let running;
  try {
    running = await startServer(loadConfig(env));
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `could not start: ${(err as Error).message}`;
    io.stderr.write(`${visible(`provenant serve: ${message}`)}\n`); // a database's or a proxy's text may be in it
    return 1;
  }
  const server = running;
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      server.deps.log.info('shutting down', { signal });
      server.close().then(
        () => resolve(0),
        (err: Error) => {
          io.stderr.write(`${visible(`provenant serve: shutdown failed: ${err.message}`)}\n`);
          resolve(1);
        },
      );
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
}

/** The dispatcher's entry (src/cli/main.ts). */
export const run = (args: string[]): Promise<number> => serve(args);
