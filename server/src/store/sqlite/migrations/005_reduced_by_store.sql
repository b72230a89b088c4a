-- The reduced fields of a fingerprinted record (signature_reduced, migration 003) are
-- written by the store's insert from now on (reducedJson in src/store/reduced.ts, the
-- bytes json_object wrote), as any engine can: the trigger and the view it read go.
-- The rows already in the table stay as they are.
DROP TRIGGER signature_reduced_insert;
DROP VIEW signature_reduced_source;
