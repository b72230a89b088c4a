// Issue 33: the shapes of the C2PA Soft Binding Resolution API (C2PA 2.2, its OpenAPI
// document: ../shared/spec/c2pa-soft-binding/openapi.json, components.schemas), served
// under /c2pa/v1, and publishing a manifest store to the repository (what verify-file
// recovers for a stripped copy is records.ts's recoveredCredentials). The server answers with these, GET
// /openapi.json describes them, the tests validate answers against the C2PA document itself.
import { z } from 'zod';
import { hex64 } from './records.js';

/** c2pa.softBindingAlgList: the algorithms this service resolves, by kind. */
export const softBindingAlgList = z.object({
  watermarks: z.array(z.object({ alg: z.string() })),
  fingerprints: z.array(z.object({ alg: z.string() })),
});

/** c2pa.softBindingQuery: POST /matches/byBinding's body. */
export const softBindingQuery = z.object({ alg: z.string(), value: z.string() });

/** c2pa.softBindingQueryResult: manifest ids, best first. */
export const softBindingQueryResult = z.object({
  matches: z.array(z.object({ manifestId: z.string(), endpoint: z.string().optional(), similarityScore: z.number().int().min(0).max(100).optional() })),
});

/** POST /api/v1/sign-it/manifests: the store's active manifest id and the record it was stored for. */
export const manifestPublishAnswer = z.object({ success: z.literal(true), manifest_id: z.string(), action_hash: hex64 });
