// provenant/api: every request and answer shape of the service, defined once as zod
// schemas. The server validates with them and generates GET /openapi.json from them
// (server/src/public/openapi.ts); the SDK's types (src/sdk) are inferred from them.
// A new answer: add its schema here (records.ts or accounts.ts, or a new module
// re-exported below) and name it in the operation's entry of openapi.ts.
import type { z } from 'zod';
import type * as records from './records.js';
import type * as accounts from './accounts.js';
import type * as c2pa from './c2pa.js';

export * from './records.js';
export * from './accounts.js';
export * from './errors.js';
export * from './c2pa.js';

export type Signature = z.output<typeof records.signature>;
export type ReducedSignature = z.output<typeof records.reducedSignature>;
export type OwnSignature = z.output<typeof records.ownSignature>;
export type QuotaState = z.output<typeof records.quotaState>;
export type VerifyAnswer = z.output<typeof records.verifyAnswer>;
export type MatchAnswer = z.output<typeof records.matchAnswer>;
export type VerifyFileAnswer = z.output<typeof records.verifyFileAnswer>;
export type EmbeddedRecordAnswer = z.output<typeof records.embeddedRecord>;
export type FuzzyQuery = z.input<typeof records.fuzzyQuery>;
export type SignRequest = z.input<typeof records.signRequest>;
export type SignAnswer = z.output<typeof records.signAnswer>;
export type QuotaSyncRequest = z.input<typeof records.quotaSyncRequest>;
export type PublishAnswer = z.output<typeof records.publishAnswer>;
export type ManifestPublishAnswer = z.output<typeof c2pa.manifestPublishAnswer>;
export type SoftBindingQueryResult = z.output<typeof c2pa.softBindingQueryResult>;
export type SoftBindingAlgList = z.output<typeof c2pa.softBindingAlgList>;
export type RecoveredCredentials = z.output<typeof records.recoveredCredentials>;
export type CreatorAnswer = z.output<typeof records.creatorAnswer>;
export type User = z.output<typeof accounts.user>;
export type DeviceKey = z.output<typeof accounts.deviceKey>;
export type SessionAnswer = z.output<typeof accounts.sessionAnswer>;
export type ChallengeAnswer = z.output<typeof accounts.challengeAnswer>;
export type SignedChallengeRequest = z.input<typeof accounts.signedChallengeRequest>;
export type SessionsRevokedAnswer = z.output<typeof accounts.sessionsRevokedAnswer>;
export type TokenResponse = z.output<typeof accounts.tokenResponse>;
export type UserInfo = z.output<typeof accounts.userInfo>;
