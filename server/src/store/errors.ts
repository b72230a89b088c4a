// The store's errors, the same from every engine: each engine turns its own constraint
// and connection failures into these, so that no caller reads an engine's messages.

/**
 * A unique value already taken. `what` names it: 'email', 'username', 'agent_key' (held
 * by another user), 'cell' (the user has one), 'action_hash' (the record is stored),
 * 'org', 'app', 'personal_org'.
 */
export class StoreConflictError extends Error {
  constructor(
    readonly what: string,
    message = `${what} is already taken`,
  ) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** A write refers to a row that does not exist. `what` names it: 'user', 'org'. */
export class StoreNotFoundError extends Error {
  constructor(
    readonly what: string,
    message = `no such ${what}`,
  ) {
    super(message);
    this.name = 'StoreNotFoundError';
  }
}

/**
 * The engine cannot be reached (PostgreSQL down, a connection lost or timed out): the
 * request that needed it fails with 503 and may be retried; the node stays up and
 * recovers when the engine is back.
 */
export class StoreUnavailableError extends Error {
  constructor(message = 'the database is unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
