-- A shared connection's schema per tenant (DESIGN.md, "Containment of tenant work"): a pattern
-- with {clientId} (e.g. t_{clientId}); a tenant's pipeline on that connection works in its own
-- schema only. NULL on a shared connection stored before the rule: tenants' runs refuse it.
ALTER TABLE connections ADD COLUMN tenant_schema TEXT;
