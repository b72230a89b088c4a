// The OpenAPI contract check of every HTTP suite: each JSON answer a test server sends
// is validated against the schema GET /openapi.json gives its route and status (the
// document the server itself serves, built from provenant/api's zod schemas), with
// Ajv's JSON Schema 2020-12 validator. Answer objects are closed
// (additionalProperties: false), so a field the document does not describe fails it.
// startTestServer (test/helpers/server.ts) watches every server it starts and its
// close() throws the violations seen, so every suite on either engine is held to the
// document without a line of its own.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../server/src/public/openapi.js';

type Schema = Record<string, unknown>;
interface Operation { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }

let compiled: { routes: { method: string; pattern: RegExp; template: string; op: Operation }[]; validators: Map<Schema, ValidateFunction>; ajv: Ajv2020 } | undefined;

function document() {
  if (compiled) return compiled;
  const doc = openApiDocument('http://127.0.0.1') as { paths: Record<string, Record<string, Operation>> };
  const routes = Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      // Koa's router matches paths case-insensitively, a trailing slash allowed
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'),
      op,
    })),
  );
  // the most specific first: a literal path before a template that also matches it
  routes.sort((a, b) => (a.template.includes('{') ? 1 : 0) - (b.template.includes('{') ? 1 : 0));
  compiled = { routes, validators: new Map(), ajv: new Ajv2020({ strict: false, allErrors: true, validateFormats: false }) };
  return compiled;
}

/**
 * The problem of one answer with the document, or null: `method` and `path` of the
 * request (the query is ignored), the status, the content type and the body's text.
 * Only JSON answers are checked (pages, SVG, metrics and empty bodies are not JSON).
 */
export function contractProblem(method: string, path: string, status: number, contentType: string, text: string): string | null {
  if (!/^application\/json\b/i.test(contentType) || text === '' || method === 'HEAD') return null;
  const { routes, validators, ajv } = document();
  const pathname = path.split('?')[0];
  const route = routes.find((r) => r.method === method && r.pattern.test(pathname));
  const where = `${method} ${pathname} ${status}`;
  let schema: Schema | undefined;
  if (route) {
    const described = route.op.responses[String(status)] ?? route.op.responses.default;
    if (!described) return `${where}: status not described for ${method} ${route.template}`;
    schema = described.content?.['application/json']?.schema;
    if (!schema) return `${where}: answered JSON where the document describes no JSON body for ${method} ${route.template}`;
  } else {
    // an unknown route or method: the error body every operation's default describes
    schema = routes[0].op.responses.default?.content?.['application/json']?.schema;
    if (!schema) return null;
  }
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${where}: application/json body that is not JSON`;
  }
  if (validate(body)) return null;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
  return `${where}${route ? ` (${route.template})` : ''}: ${errors.join('; ')}; body ${text.length > 400 ? `${text.slice(0, 400)}...` : text}`;
}

/**
 * Watches every answer `server` sends: the JSON ones are checked with contractProblem
 * and each problem is pushed to the returned list. The bytes sent are not changed.
 */
export function watchContract(server: Server): string[] {
  const problems: string[] = [];
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      if (!/^application\/json\b/i.test(String(res.getHeader('content-type') ?? ''))) return; // only JSON is checked: tiles and files are not kept
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array));
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      try {
        const problem = contractProblem(req.method ?? 'GET', req.url ?? '/', res.statusCode, String(res.getHeader('content-type') ?? ''), Buffer.concat(chunks).toString('utf8'));
        if (problem !== null) problems.push(problem);
      } catch (err) {
        problems.push(`${req.method} ${req.url}: the contract check failed: ${(err as Error).message}`);
      }
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
    for (const listener of listeners) listener.call(server, req, res);
  });
  return problems;
}

/** The error close() throws for the problems seen, or null. */
export function contractError(problems: readonly string[]): Error | null {
  if (problems.length === 0) return null;
  const unique = [...new Set(problems)];
  return new Error(`OpenAPI contract: ${unique.length} answer(s) the document (GET /openapi.json) does not describe:\n  ${unique.join('\n  ')}`);
}
