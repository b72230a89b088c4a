// Request checks of the C2PA Soft Binding Resolution API (issue 33; C2PA 2.2, its OpenAPI
// document's parameters). Each malformed or missing parameter is 400 invalid_parameter
// naming it (`field`), an algorithm this service does not resolve 400
// unsupported_algorithm; a parameter given twice is malformed.
import { ISCC_SOFT_BINDING_ALG, MATCH_LIMIT, decodeIscc, isccFromBytes, isccIndexKey } from 'provenant';
import { ApiError } from '../errors.js';
import { isManifestLabel } from '../domain/manifests.js';

/** The soft binding algorithms resolved (GET /services/supportedAlgorithms). */
export const SUPPORTED_FINGERPRINTS: readonly string[] = [ISCC_SOFT_BINDING_ALG];

/** maxResults when none is given (the OpenAPI document's default), and the most answered. */
export const DEFAULT_MAX_RESULTS = 10;
export const MAX_RESULTS = MATCH_LIMIT;

/** Characters of a base64 soft binding value at most (an ISCC-CODE's text is under 80). */
export const MAX_VALUE_CHARS = 1024;

/** One query parameter's text, or undefined when absent; 400 when given twice. */
function single(query: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw new ApiError('invalid_parameter', `${name} is given more than once.`, { field: name });
  return v;
}

function required(query: Record<string, string | string[] | undefined>, name: string): string {
  const v = single(query, name);
  if (v === undefined || v === '') throw new ApiError('invalid_parameter', `${name} is required.`, { field: name });
  return v;
}

/** maxResults: an integer from 1 (default 10); more than MAX_RESULTS answers MAX_RESULTS. */
export function parseMaxResults(query: Record<string, string | string[] | undefined>): number {
  const text = single(query, 'maxResults');
  if (text === undefined) return DEFAULT_MAX_RESULTS;
  if (!/^[0-9]{1,12}$/.test(text) || Number(text) < 1) throw new ApiError('invalid_parameter', 'maxResults must be an integer of at least 1.', { field: 'maxResults' });
  return Math.min(MAX_RESULTS, Number(text));
}

/** An algorithm this service resolves, else 400 unsupported_algorithm. */
function supportedAlg(alg: string, field: string): string {
  if (!SUPPORTED_FINGERPRINTS.includes(alg)) {
    throw new ApiError('unsupported_algorithm', `${field} ${JSON.stringify(alg.slice(0, 100))} is not resolved here; this service resolves ${SUPPORTED_FINGERPRINTS.join(', ')}.`, { field });
  }
  return alg;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}|[A-Za-z0-9+/]{3})?$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * An io.iscc.v0 value: base64 (standard, or URL-safe) of the soft binding block's value,
 * that is the Content-Code's canonical text (`ISCC:EEA...`, as the vault writes it; the
 * prefix may be left out), or of the code's binary form (header and body). Answers the
 * canonical text, or null for a code that can never match (too few or too many bits set,
 * isccIndexKey). 400 for anything that is not a Content-Code of at least 64 bits.
 */
export function parseIsccValue(value: string, field: string): string | null {
  const fail = (why: string): never => {
    throw new ApiError('invalid_parameter', `${field} must be base64 of an ISCC Content-Code of at least 64 bits (${why}).`, { field });
  };
  if (value.length > MAX_VALUE_CHARS) fail(`at most ${MAX_VALUE_CHARS} characters`);
  if (!BASE64.test(value) && !BASE64URL.test(value)) fail('not base64');
  const bytes = Buffer.from(value, BASE64.test(value) ? 'base64' : 'base64url');
  if (bytes.length === 0) fail('empty');
  let code: string;
  const text = bytes.toString('latin1');
  if (/^(?:ISCC:)?[A-Z2-7]{16,}$/.test(text)) code = text.startsWith('ISCC:') ? text : `ISCC:${text}`;
  else {
    try {
      code = isccFromBytes(bytes);
    } catch {
      return fail('neither its text nor its binary form');
    }
  }
  try {
    decodeIscc(code);
    return isccIndexKey(code) === null ? null : code;
  } catch (e) {
    return fail((e as Error).message.slice(0, 120));
  }
}

export interface BindingQuery {
  alg: string;
  /** The Content-Code, or null for one that never matches. */
  content: string | null;
  maxResults: number;
}

/** GET /matches/byBinding: alg, value, maxResults in the query. */
/** A base64 value from a query string: a `+` sent unescaped arrives as a space (form encoding), so spaces are read back as `+`. */
const queryBase64 = (text: string) => text.replace(/ /g, '+');

export function parseBindingQuery(query: Record<string, string | string[] | undefined>): BindingQuery {
  const alg = supportedAlg(required(query, 'alg'), 'alg');
  const value = queryBase64(required(query, 'value'));
  return { alg, content: parseIsccValue(value, 'value'), maxResults: parseMaxResults(query) };
}

/** POST /matches/byBinding: c2pa.softBindingQuery ({alg, value}) in the body, maxResults in the query. */
export function parseBindingBody(body: unknown, query: Record<string, string | string[] | undefined>): BindingQuery {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError('invalid_parameter', 'The body must be a JSON object {alg, value}.', { field: 'body' });
  const { alg, value } = body as Record<string, unknown>;
  if (typeof alg !== 'string' || alg === '') throw new ApiError('invalid_parameter', 'alg is required (a string).', { field: 'alg' });
  if (typeof value !== 'string' || value === '') throw new ApiError('invalid_parameter', 'value is required (a base64 string).', { field: 'value' });
  return { alg: supportedAlg(alg, 'alg'), content: parseIsccValue(value, 'value'), maxResults: parseMaxResults(query) };
}

export interface ContentQuery {
  /** Only this algorithm's matches (io.iscc.v0), or null for every fingerprint (verify-file's pipeline). */
  alg: string | null;
  /** A hint's Content-Code (hintAlg io.iscc.v0), added to the candidates. */
  hint: string | null;
  maxResults: number;
}

/**
 * POST /matches/byContent: alg (optional), maxResults, and hintAlg with hintValue (both or
 * neither; a hint of an algorithm not resolved here is no help, and is left unused).
 */
export function parseContentQuery(query: Record<string, string | string[] | undefined>): ContentQuery {
  const alg = single(query, 'alg');
  const hintAlg = single(query, 'hintAlg');
  const hintValue = single(query, 'hintValue');
  if ((hintAlg === undefined) !== (hintValue === undefined)) {
    const missing = hintAlg === undefined ? 'hintAlg' : 'hintValue';
    throw new ApiError('invalid_parameter', 'hintAlg and hintValue go together.', { field: missing });
  }
  const hint = hintAlg === ISCC_SOFT_BINDING_ALG ? parseIsccValue(queryBase64(hintValue!), 'hintValue') : null;
  return { alg: alg === undefined || alg === '' ? null : supportedAlg(alg, 'alg'), hint, maxResults: parseMaxResults(query) };
}

/** A manifest id of the path, else 400 invalid_manifest_id. */
export function parseManifestId(id: string): string {
  if (!isManifestLabel(id)) throw new ApiError('invalid_manifest_id', undefined, { field: 'manifestId' });
  return id;
}

/** returnActiveManifest: true or false (default false). */
export function parseReturnActive(query: Record<string, string | string[] | undefined>): boolean {
  const text = single(query, 'returnActiveManifest');
  if (text === undefined) return false;
  if (text !== 'true' && text !== 'false') throw new ApiError('invalid_parameter', 'returnActiveManifest must be true or false.', { field: 'returnActiveManifest' });
  return text === 'true';
}
