-- Session revocation and device-key unlinking (issue 25, item 1).
-- users.sessions_valid_after: session tokens issued before it (Unix ms, compared with
-- the token's iat_ms) are void; set by "sign out everywhere" and a password change,
-- read with the user on every authenticated request, so every node sees it at once.
-- agents.unlinked_at: the user unlinked the key (Unix ms); the row stays so that the
-- records it signed keep their signer and no other account can take the key.
ALTER TABLE users ADD COLUMN sessions_valid_after INTEGER;
ALTER TABLE agents ADD COLUMN unlinked_at INTEGER;
