-- intents_unfinished indexed the unfinished intents by (created_at, seq)
-- for the console's list of them, under the same condition as intents_due
-- (state <> 'final'). Every intent is written to it when recorded and
-- removed when final: one more B-tree page in the synced commit of every
-- order (docs/PERFORMANCE.md, "One synced commit per order"). The
-- console's list (at most 1000 of the unfinished intents, oldest first)
-- reads them through intents_due and sorts them instead.
DROP INDEX intents_unfinished;
