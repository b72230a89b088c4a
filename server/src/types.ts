// What every feature router receives, and what the auth layer puts on ctx.state.

/** The caller, as established by the auth middleware (server/src/auth/). */
export interface AuthState {
  userId: string;
  /** A JWT session token (decisions.md 5) or an OAuth access token (added with OAuth). */
  kind: 'session' | 'oauth';
  /** The app the token carries: a developer token's `app_id` claim or the OAuth client. */
  appId: string | null;
  /** OAuth scopes; null for session tokens, which may do everything the user may. */
  scopes: string[] | null;
}

export interface AppState {
  requestId: string;
  auth?: AuthState;
}
