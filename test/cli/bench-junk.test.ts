// What a file named as media claims and, when its content is none, the reason the bench
// gives (src/cli/bench/junk.ts), on hand-made bytes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimedKind, decoderRefused, notMediaReason } from '../../src/cli/bench/junk.js';

const bytes = (text: string) => new TextEncoder().encode(text);

test('claimedKind: the extension of a type the library reads, any case; others claim nothing', () => {
  for (const [name, kind] of [['a/photo.jpg', 'image'], ['IMG_1.JPEG', 'image'], ['x.tif', 'image'], ['s.WAV', 'audio'], ['s.opus', 'audio'], ['s.oga', 'audio'], ['c.mov', 'video'], ['c.webm', 'video']] as const) {
    assert.is(claimedKind(name), kind, name);
  }
  for (const name of ['notes.txt', 'jpg', 'archive.jpg.zip', 'photo.heic', 'README']) assert.is(claimedKind(name), null, name);
});

test('notMediaReason: empty, text, an HTML page, zero bytes, other formats, a few bytes, unknown bytes', () => {
  assert.is(notMediaReason('image', new Uint8Array(0), 0), 'empty file');
  assert.is(notMediaReason('image', bytes('this is not a photo\n'), 20), 'no image inside: the content is text');
  assert.is(notMediaReason('audio', bytes('\ufeffnaïve café — ünïcode\r\n\tok'), 40), 'no audio inside: the content is text');
  assert.is(notMediaReason('image', bytes('  <!DOCTYPE html><html><body>moved</body></html>'), 48), 'no image inside: the content is an HTML page');
  assert.is(notMediaReason('video', new Uint8Array(4096), 1_000_000), 'no video inside: the content is 1000000 zero bytes');
  assert.is(notMediaReason('video', bytes('%PDF-1.7\n'), 9), 'no video inside: the content is a PDF document');
  assert.is(notMediaReason('image', Uint8Array.of(0x50, 0x4b, 3, 4, 20, 0), 6), 'no image inside: the content is a ZIP archive');
  assert.is(notMediaReason('image', Uint8Array.of(0xff, 0xd8, 0xff), 3), 'no image inside: the content is only 3 bytes');
  assert.is(notMediaReason('audio', Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9), 13), 'no audio inside: the content is unrecognised bytes (de ad be ef 01 02 03 04 ...)');
  // a control character, or UTF-8 that is not, is not text
  assert.is(notMediaReason('image', bytes('text\x1b[2J with an escape, long enough'), 40), 'no image inside: the content is unrecognised bytes (74 65 78 74 1b 5b 32 4a ...)');
  // a multi-byte character cut at the end of the head is still text
  assert.is(notMediaReason('image', bytes('caf\u00e9 au lait').subarray(0, 4), 100), 'no image inside: the content is text');
  assert.is(decoderRefused('cannot decode this jpeg file: premature end'), 'decoder refused: cannot decode this jpeg file: premature end');
});

test.run();
