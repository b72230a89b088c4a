// The integrity report of a file (spec 2.1 `integrity_report`, decisions.md 4):
// classify from content, walk the structure once, run exactly the checks of the
// class, and collect their issues. Malformed input gives findings, never a throw.
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { KernelBytes, type IntegrityCheck, type IntegrityIssue, type IntegrityReport } from '../lib/integrity.js';
import type { ContentCredentials } from '../lib/content-credentials.js';
import '../lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import { decodeBmp } from './bmp.js';
import { readContentCredentials } from './c2pa.js';
import { classifyContent, checksFor, type ContentClass } from './integrity/classify.js';
import { fileStructure, type Structure } from './integrity/structure.js';
import {
  postEofData, appendedFiles, metadataInspection, entropyAnalysis, lsbAnalysis, unicodeSteg,
  type FileContext, type DecodedImage,
} from './integrity/checks.js';

export { checksFor, classifyContent } from './integrity/classify.js';
export { THRESHOLDS as INTEGRITY_THRESHOLDS } from './integrity/checks.js';

/** Largest image decoded for LSB statistics (pixels). */
const MAX_LSB_PIXELS = 100_000_000;

/** 8-bit pixels for the LSB statistics: sharp for PNG and TIFF, our reader for BMP. */
export async function decodeForLsb(bytes: Uint8Array, format: string): Promise<DecodedImage> {
  if (format === 'bmp') return decodeBmp(bytes, { maxPixels: MAX_LSB_PIXELS });
  const { data, info } = await sharp(bytes, { limitInputPixels: MAX_LSB_PIXELS, pages: 1, failOn: 'none' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

function guarded(check: IntegrityCheck, run: () => IntegrityIssue[]): IntegrityIssue[] {
  try {
    return run();
  } catch (e) {
    // a check that cannot finish on this input says so instead of failing the report
    return [{ check, severity: 'Info', description: `check could not complete: ${(e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').slice(0, 150)}` }];
  }
}

async function lsbIssues(ctx: FileContext): Promise<IntegrityIssue[]> {
  if (ctx.structure.pngColourType === 3) return lsbAnalysis(ctx, null).issues;
  let image: DecodedImage | null = null;
  let why: string | undefined;
  try {
    image = await decodeForLsb(ctx.bytes, ctx.cls.format);
  } catch (e) {
    why = (e instanceof Error ? e.message : String(e)).slice(0, 120);
  }
  return guarded('LsbAnalysis', () => lsbAnalysis(ctx, image, why).issues);
}

/** The file's Content Credentials; a reader that fails (it should not) makes them unknown, not the report fail. */
async function credentialsOf(bytes: Uint8Array, read: (bytes: Uint8Array) => Promise<ContentCredentials>): Promise<ContentCredentials> {
  try {
    return await read(bytes);
  } catch (e) {
    return { present: null, message: `the Content Credentials reader failed: ${(e instanceof Error ? e.message : String(e)).slice(0, 150)}` };
  }
}

export interface IntegrityOptions {
  /**
   * How the Content Credentials are read (default: readContentCredentials, in this
   * process, without a deadline). In-process callers pass a sandboxed reader with a
   * deadline (local-credentials.ts); the sandbox's own process reads them itself.
   */
  credentials?: (bytes: Uint8Array) => Promise<ContentCredentials>;
}

/** The integrity report of a file's bytes, or of the file at a path. */
export async function integrityReport(pathOrBuffer: string | Uint8Array, options: IntegrityOptions = {}): Promise<IntegrityReport> {
  const bytes = typeof pathOrBuffer === 'string' ? new Uint8Array(await readFile(pathOrBuffer)) : pathOrBuffer;
  const input = KernelBytes.load(bytes);
  try {
    let cls: ContentClass;
    try {
      cls = classifyContent(bytes, input);
    } catch {
      cls = { family: 'binary', format: 'binary' };
    }
    let structure: Structure;
    try {
      structure = fileStructure(cls, bytes, input);
    } catch (e) {
      structure = { end: null, issues: [{ check: 'PostEofData', severity: 'Info', description: `structure walk failed: ${String(e).replace(/\s+/g, ' ').slice(0, 150)}` }], segments: [], explained: [], tiffRecords: [] };
    }
    const ctx: FileContext = { bytes, input, cls, structure };
    const checks = checksFor(cls);
    const issues: IntegrityIssue[] = [];
    for (const check of checks) {
      switch (check) {
        case 'PostEofData': issues.push(...guarded(check, () => postEofData(ctx))); break;
        case 'LsbAnalysis': issues.push(...(await lsbIssues(ctx))); break;
        case 'MetadataInspection': issues.push(...guarded(check, () => metadataInspection(ctx))); break;
        case 'EntropyAnalysis': issues.push(...guarded(check, () => entropyAnalysis(ctx))); break;
        case 'AppendedFileDetection': issues.push(...guarded(check, () => appendedFiles(ctx))); break;
        case 'UnicodeSteg': issues.push(...guarded(check, () => unicodeSteg(ctx))); break;
      }
    }
    return { checks_performed: checks, issues_found: issues, checked_at: Date.now(), content_credentials: await credentialsOf(bytes, options.credentials ?? readContentCredentials) };
  } finally {
    input.release();
  }
}
