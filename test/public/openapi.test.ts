// GET /openapi.json describes exactly the routes the server registers: the routers'
// own stacks (every feature of app.ts FEATURES, under its prefix) against the document.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FEATURES } from '../../server/src/app.js';
import { describedRoutes } from '../../server/src/public/openapi.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
test.before(async () => {
  srv = await startTestServer();
});
test.after(async () => srv.close());

/** `METHOD /path` of every route the routers hold (HEAD comes with GET), `:param` as `{param}`. */
function registeredRoutes(): string[] {
  const out = new Set<string>();
  for (const [prefix, make] of FEATURES) {
    for (const layer of make(srv.deps).stack) {
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        out.add(`${method} ${(prefix + layer.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      }
    }
  }
  return [...out].sort();
}

test('the document lists exactly the routes the server registers', () => {
  const registered = registeredRoutes();
  const described = new Set(describedRoutes());
  const missing = registered.filter((r) => !described.has(r));
  const extra = [...described].filter((r) => !registered.includes(r));
  assert.ok(registered.length > 40, `the walk found the routes (${registered.length})`);
  assert.equal(missing, [], `routes registered but not described in server/src/public/openapi.ts:\n  ${missing.join('\n  ')}`);
  assert.equal(extra, [], `routes described but not registered:\n  ${extra.join('\n  ')}`);
});

test('GET /openapi.json: OpenAPI 3.1, every operation with responses; JSON bodies with schemas; security schemes that exist', async () => {
  const res = await fetch(`${srv.url}/openapi.json`);
  assert.is(res.status, 200);
  const doc = await res.json();
  assert.is(doc.openapi, '3.1.0');
  assert.is(doc.servers[0].url, srv.deps.config.baseUrl);
  const schemes = Object.keys(doc.components.securitySchemes);
  let operations = 0;
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      operations += 1;
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(Object.keys(op.responses).some((s) => /^2\d\d$/.test(s)), `${where}: a success response`);
      for (const response of Object.values<any>(op.responses)) {
        assert.type(response.description, 'string', where);
        for (const media of Object.values<any>(response.content ?? {})) assert.type(media.schema, 'object', where);
      }
      if (op.requestBody) {
        for (const media of Object.values<any>(op.requestBody.content)) assert.type(media.schema, 'object', where);
      }
      for (const requirement of op.security) for (const name of Object.keys(requirement)) assert.ok(schemes.includes(name), `${where}: ${name}`);
      for (const p of op.parameters ?? []) if (p.in === 'path') assert.ok(path.includes(`{${p.name}}`), `${where}: path parameter ${p.name}`);
    }
  }
  assert.is(operations, describedRoutes().length);
  // bodies derived from the features' zod schemas keep their rules
  const register = doc.paths['/api/v1/auth/register'].post.requestBody.content['application/json'].schema;
  assert.equal(register.required.sort(), ['email', 'password']);
  const contact = doc.paths['/api/v1/sign-it/contact'].post.requestBody.content['application/json'].schema;
  assert.is(contact.properties.message.maxLength, 500);
  assert.is(contact.properties.sender_name.maxLength, 100);
  assert.is(contact.properties.sender_email.maxLength, 254);
});

test.run();
