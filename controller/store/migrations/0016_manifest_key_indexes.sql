-- Lookups by the manifest that owns a row: the notifications' "which client is this event about"
-- (one per reconciled Client: a full scan of `clients` made a 10,000-client cold sync O(n²)) and
-- the Authorizer's ownership of a connection.
CREATE INDEX clients_manifest ON clients(manifest_key);
CREATE INDEX connections_manifest ON connections(manifest_key);
