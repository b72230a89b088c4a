// A strict check of Soft Binding Resolution API answers against the C2PA 2.2 OpenAPI
// document itself (test/fixtures/c2pa-soft-binding/openapi.json), not against ours: the
// operation by method and path, the status among those it declares (or among the extra
// ones a test names, which our own GET /openapi.json describes), the content type
// among the status's, and a JSON body against the status's schema with Ajv (draft-07, as
// OpenAPI 3.0's schemas are), every object closed (additionalProperties false), so a
// field the document does not define fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';

type Schema = Record<string, unknown>;
interface Operation { responses: Record<string, { content?: Record<string, { schema?: Schema }> }> }

const DOC = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'c2pa-soft-binding', 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** Every object schema with properties closed. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, closed(s)])) : closed(v);
  if ('properties' in out && !('additionalProperties' in out)) {
    out.additionalProperties = false;
    out.type ??= 'object';
  }
  return out;
}

// strict, but for `required` naming a property its subschema does not define: the document's
// softBindingAlgList items say oneOf [{required: [watermarks]}, {required: [fingerprints]}]
// (an error of the document: no item can satisfy it, so a conforming list of watermarks is
// empty, as ours is)
const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true });
ajv.addKeyword('example');
/** The document's component schemas as draft-07 definitions of one schema, `c2pa`, their references rewritten to match. */
const toDefinitions = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"c2pa#/definitions/'));
ajv.addSchema({ $id: 'c2pa', definitions: toDefinitions(closed(DOC.components.schemas)) as Schema });
const validators = new Map<string, ValidateFunction>();

function validatorFor(schema: Schema): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (v === undefined) {
    const ref = toDefinitions(closed(schema));
    validators.set(key, (v = ajv.compile(ref as Schema)));
  }
  return v;
}

function operation(method: string, path: string): Operation | undefined {
  for (const [template, methods] of Object.entries(DOC.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path)) return methods[method.toLowerCase()];
  }
  return undefined;
}

/**
 * The answer's problem with the C2PA document, or null. `path` is relative to the API's
 * server URL (/matches/byBinding, ...); `extraStatuses`: statuses the document does not
 * declare for the operation that the test expects (a malformed parameter's 400, 413).
 */
export function c2paAnswerProblem(method: string, path: string, res: { status: number; contentType: string; body: Uint8Array }, extraStatuses: number[] = []): string | null {
  const op = operation(method, path);
  if (op === undefined) return `${method} ${path}: no such operation in the C2PA document`;
  const declared = op.responses[String(res.status)];
  if (declared === undefined) return extraStatuses.includes(res.status) ? null : `${method} ${path}: status ${res.status} is not declared (${Object.keys(op.responses).join(', ')})`;
  const types = Object.keys(declared.content ?? {});
  if (types.length === 0) return null; // declared without content: any body
  const type = res.contentType.split(';')[0].trim();
  if (!types.includes(type)) return `${method} ${path} ${res.status}: content type ${type}, not ${types.join(' or ')}`;
  const schema = declared.content![type].schema;
  if (type !== 'application/json' || schema === undefined) return null;
  const validate = validatorFor(schema);
  if (validate(JSON.parse(new TextDecoder().decode(res.body)))) return null;
  return `${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}`;
}
