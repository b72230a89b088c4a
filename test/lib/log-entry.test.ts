// Log entries' bytes (src/lib/log-entry.ts): a record entry is written by splicing the
// record's canonical bytes between the other members; checked here against the
// `canonicalize` package's RFC 8785 of the whole entry object, on seeded random records
// (escapes, astral characters, numbers, nested objects, pdq_hash), and against one entry
// written by hand.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import canonicalize from 'canonicalize';
import { decodeLogEntry, encodeLogEntry } from '../../src/lib/log-entry.js';
import type { SignatureRecord } from '../../src/lib/records.js';
import { rng } from '../helpers/random.js';

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const HEX = (c: string) => c.repeat(64);

function randomString(next: () => number): string {
  const pool = ['a', 'Z', ' ', '"', '\\', '\n', '\u0001', '\u007f', 'é', '€', '😀', '\u2028', '/', '<'];
  let s = '';
  const n = Math.floor(next() * 12);
  for (let i = 0; i < n; i++) s += pool[Math.floor(next() * pool.length)];
  return s;
}

function randomRecord(next: () => number): SignatureRecord {
  const maybe = <T>(v: T): T | null => (next() < 0.5 ? null : v);
  const record: SignatureRecord = {
    file_hash: HEX('a'), signer: `~${'b'.repeat(43)}`, signed_at: Math.floor(next() * 2 ** 45), intent: 'Authorship',
    ai_generation: maybe('None'),
    content_rights: maybe({ license: { Custom: randomString(next) }, commercial_licensing: maybe('ContactForTerms'), ai_training: null, contact_preference: null }),
    integrity_report: maybe({ score: next(), notes: [randomString(next), 1e21, -0.5] }),
    perceptual_hash: maybe({ hash_type: 'dHash', hash_value: HEX('c').slice(0, 16) }),
    comment: maybe(randomString(next)), supersedes: maybe(HEX('d')), expires_at: maybe(Math.floor(next() * 2 ** 45)),
    tags: maybe([randomString(next), randomString(next)]),
  };
  if (next() < 0.3) record.pdq_hash = { hash_type: 'PDQ', hash_value: HEX('e'), quality: Math.floor(next() * 101) };
  return record;
}

test('a record entry is the RFC 8785 form of the whole entry object (canonicalize package), on 500 random records', () => {
  const next = rng(27);
  for (let i = 0; i < 500; i++) {
    const record = randomRecord(next);
    const entry = { kind: 'record' as const, action_hash: HEX('f'), record, signature: 'c2lnbmF0dXJl+/==', published_at: Math.floor(next() * 2 ** 45) };
    const bytes = encodeLogEntry(entry);
    assert.is(text(bytes), canonicalize(entry), `record ${i}`);
    assert.equal(decodeLogEntry(bytes), entry);
  }
});

test('a record entry written by hand', () => {
  const record: SignatureRecord = {
    file_hash: HEX('a'), signer: '~key', signed_at: 5, intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: null, comment: 'é "x"', supersedes: null, expires_at: null, tags: null,
  };
  const bytes = encodeLogEntry({ kind: 'record', action_hash: HEX('1'), record: { ...record, extra: 1 } as SignatureRecord, signature: 'sig', published_at: 7 });
  assert.is(
    text(bytes),
    `{"action_hash":"${HEX('1')}","kind":"record","published_at":7,"record":{"ai_generation":null,"comment":"é \\"x\\"","content_rights":null,`
      + `"expires_at":null,"file_hash":"${HEX('a')}","integrity_report":null,"intent":"Authorship","perceptual_hash":null,"signed_at":5,`
      + '"signer":"~key","supersedes":null,"tags":null},"signature":"sig"}',
    'the twelve fields only (extra left out), members sorted',
  );
});

test.run();
