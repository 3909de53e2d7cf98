-- A client's own X-Request-ID, kept apart from the request id the gateway
-- generates for every request (request_id), so that no client can give
-- its record another request's id.
ALTER TABLE audit_log ADD COLUMN client_request_id TEXT NOT NULL DEFAULT '';
