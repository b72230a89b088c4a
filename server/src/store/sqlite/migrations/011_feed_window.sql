-- The change feed's window (issue 25 item 10): the feed keeps its recent changes only
-- (by count and age, pruned from the oldest: store/types.ts ChangeFeed.prune). One row
-- remembers the highest seq ever pruned: a reader whose cursor is below it has missed
-- changes and reloads what it follows from the tables (feed-follower.ts), and latest()
-- never goes back below it when every change has been pruned.
CREATE TABLE feed_window (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_through  INTEGER NOT NULL                         -- highest seq deleted (0: none)
);
INSERT INTO feed_window (id, pruned_through) VALUES (1, 0);
