// The answers of the Soft Binding Resolution API (c2pa.softBindingAlgList,
// c2pa.softBindingQueryResult) and of the repository's intake, shaped once here
// (src/api/c2pa.ts describes them).
import type { ManifestPublishAnswer, SoftBindingAlgList, SoftBindingQueryResult } from 'provenant/api';
import type { StoredManifest } from '../domain/manifests.js';
import type { ManifestMatch } from './service.js';

export function algList(fingerprints: readonly string[]): SoftBindingAlgList {
  return { watermarks: [], fingerprints: fingerprints.map((alg) => ({ alg })) };
}

export function queryResult(matches: readonly ManifestMatch[]): SoftBindingQueryResult {
  return { matches: matches.map((m) => ({ ...m })) };
}

export function manifestPublished(stored: StoredManifest): ManifestPublishAnswer {
  return { success: true, manifest_id: stored.manifestId, action_hash: stored.actionHash };
}
