-- An intent's answer in the journal's own terms (exgate.IntentAnswer)
-- instead of the HTTP status it used to be stored as: 200 held the
-- exchange's record, 504 the PENDING record of an unknown outcome, 0 (or
-- no response at all) nothing yet, and any other status an error.
ALTER TABLE intents ADD COLUMN answer TEXT NOT NULL DEFAULT '';

UPDATE intents SET answer = CASE
    WHEN response IS NULL OR status = 0 THEN ''
    WHEN status = 200 THEN 'record'
    WHEN status = 504 THEN 'pending'
    ELSE 'error'
END;

ALTER TABLE intents DROP COLUMN status;
