// The HTTP suites of the sign-it contract, auth, sessions and device keys, OAuth (authorize, tokens, flow, token reach), developer apps, server-hosted cells, hostile records, the public surfaces, webhooks and the C2PA manifest repository
// run again against a node on PostgreSQL, unchanged: each file is imported with ?engine=postgres
// (a module instance of its own, whose servers testEngine() puts on a fresh database of
// this process's throwaway PostgreSQL). Skipped (and why) without the PostgreSQL
// binaries; a failure under CI=true.
import { postgresUnavailable, runWithPostgres } from '../helpers/postgres.js';

const SUITES = ['../server/signit.test.ts', '../server/auth.test.ts', '../server/developer.test.ts', '../server/cells.test.ts', '../server/hostile-records.test.ts', '../public/contact.test.ts', '../public/public.test.ts', '../server/email-verification.test.ts', '../webhooks/webhooks.test.ts', '../oauth/token-reach.test.ts', '../server/sessions.test.ts', '../oauth/authorize.test.ts', '../oauth/tokens.test.ts', '../oauth/flow.test.ts', '../server/pdq-records.test.ts', '../server/record-extensions.test.ts', '../server/features.test.ts', '../c2pa/soft-binding.test.ts'];

if (postgresUnavailable() === null) {
  for (const file of SUITES) await import(`${file}?engine=postgres`);
} else {
  runWithPostgres(() => undefined);
}
