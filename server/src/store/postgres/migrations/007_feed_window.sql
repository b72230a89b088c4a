-- The change feed's window (issue 25 item 10), as SQLite migration 011: the feed keeps
-- its recent changes only; one row remembers the highest seq ever pruned, so that a
-- reader whose cursor is below it knows it missed changes (and reloads from the tables).
CREATE TABLE feed_window (
  id              integer PRIMARY KEY CHECK (id = 1),
  pruned_through  bigint NOT NULL
);
INSERT INTO feed_window (id, pruned_through) VALUES (1, 0);
