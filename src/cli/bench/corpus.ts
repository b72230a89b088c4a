// The originals: every image, audio and video file under the given directories, found by
// content (src/lib/detect.ts: magic bytes, never the name), in path order; files that
// cannot be read are listed and skipped, never fatal; byte-identical copies count once
// (a corpus often holds the same file twice, which would read as a false match). A file
// whose name claims a media type its content does not hold is listed by name, with what
// it holds instead (junk.ts).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { detectType } from '../../lib/detect.js';
import type { Original } from './suite.js';
import { claimedKind, notMediaReason, type Junk } from './junk.js';
import { below, type Random } from './random.js';

export interface Skipped {
  path: string;
  reason: string;
}

export interface Corpus {
  originals: (Original & { sha256: string; bytes: number })[];
  skipped: Skipped[];
  /** Files whose name claims a media type and whose content is none the library reads, by name (run.ts adds those the decoders refuse). */
  junk: Junk[];
  /** Files read that are not a supported image, audio or video type, and whose names do not claim one. */
  other: number;
  /** Byte-identical copies of an earlier original, left out. */
  duplicates: number;
  /** Media files found before --limit chose among them. */
  found: number;
}

const HEAD = 4096;

function reasonOf(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'EACCES' || err.code === 'EPERM') return 'permission denied';
  if (err.code === 'ENOENT') return 'no such file or directory';
  if (err.code === 'EISDIR') return 'is a directory';
  return err.message ?? String(e);
}

/** The first HEAD bytes of a file, and its size. */
async function head(path: string): Promise<{ bytes: Uint8Array; size: number }> {
  const file = await open(path, 'r');
  try {
    const buf = new Uint8Array(HEAD);
    const { bytesRead } = await file.read(buf, 0, HEAD, 0);
    return { bytes: buf.subarray(0, bytesRead), size: (await file.stat()).size };
  } finally {
    await file.close();
  }
}

function sha256(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const h = createHash('sha256');
    createReadStream(path).on('data', (c) => h.update(c)).on('error', fail).on('end', () => done(h.digest('hex')));
  });
}

/** Regular files under `root` (a file itself when it is one), sorted; symbolic links to directories are not followed. */
async function walk(root: string, out: string[], skipped: Skipped[]): Promise<void> {
  let info;
  try {
    info = await stat(root);
  } catch (e) {
    skipped.push({ path: root, reason: reasonOf(e) });
    return;
  }
  if (info.isFile()) {
    out.push(root);
    return;
  }
  if (!info.isDirectory()) return;
  let names: string[];
  try {
    names = (await readdir(root)).sort();
  } catch (e) {
    skipped.push({ path: root, reason: reasonOf(e) });
    return;
  }
  for (const name of names) {
    const path = join(root, name);
    let l;
    try {
      l = await lstat(path);
    } catch (e) {
      skipped.push({ path, reason: reasonOf(e) });
      continue;
    }
    if (l.isDirectory()) await walk(path, out, skipped);
    else if (l.isFile()) out.push(path);
    else if (l.isSymbolicLink()) {
      // a link to a file is read; a broken one is listed; a link to a directory is not followed
      try {
        if ((await stat(path)).isFile()) out.push(path);
      } catch (e) {
        skipped.push({ path, reason: reasonOf(e) });
      }
    }
  }
}

/**
 * The originals under `dirs`; with `limit`, that many of them chosen at random (seeded)
 * and put back in path order.
 */
export async function findOriginals(dirs: string[], limit: number | null, random: Random): Promise<Corpus> {
  const files: string[] = [];
  const skipped: Skipped[] = [];
  for (const d of dirs) await walk(resolve(d), files, skipped);
  const media: Original[] = [];
  const junk: Junk[] = [];
  let other = 0;
  for (const path of files) {
    try {
      const { bytes, size } = await head(path);
      const type = detectType(bytes);
      const claimed = type === null ? claimedKind(path) : null;
      if (claimed !== null) junk.push({ path, claimed, reason: notMediaReason(claimed, bytes, size) });
      else if (type === null) other++;
      else media.push({ path, kind: type.kind, format: type.format });
    } catch (e) {
      skipped.push({ path, reason: reasonOf(e) });
    }
  }
  let chosen = media;
  if (limit !== null && limit < media.length) {
    // a partial Fisher-Yates shuffle: the first `limit` places
    const a = media.slice();
    for (let i = 0; i < limit; i++) {
      const j = i + below(random, a.length - i);
      [a[i], a[j]] = [a[j], a[i]];
    }
    chosen = a.slice(0, limit).sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  }
  const seen = new Set<string>();
  const originals: Corpus['originals'] = [];
  let duplicates = 0;
  for (const o of chosen) {
    try {
      const [digest, s] = await Promise.all([sha256(o.path), stat(o.path)]);
      if (seen.has(digest)) {
        duplicates++;
        continue;
      }
      seen.add(digest);
      originals.push({ ...o, sha256: digest, bytes: s.size });
    } catch (e) {
      skipped.push({ path: o.path, reason: reasonOf(e) });
    }
  }
  return { originals, skipped, junk, other, duplicates, found: media.length };
}
