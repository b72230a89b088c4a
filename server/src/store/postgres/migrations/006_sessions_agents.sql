-- Session revocation and device-key unlinking (issue 25, item 1), as SQLite migration
-- 010: users.sessions_valid_after (Unix ms; session tokens issued before it are void),
-- agents.unlinked_at (Unix ms; the key's row stays, it can no longer sign in).
ALTER TABLE users ADD COLUMN sessions_valid_after bigint;
ALTER TABLE agents ADD COLUMN unlinked_at bigint;
