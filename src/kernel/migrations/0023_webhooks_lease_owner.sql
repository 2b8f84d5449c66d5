-- 0023_webhooks_lease_owner: who holds a delivery's lease, as <node>/<process> (src/core/node-id.ts),
-- so that a node restarting after a crash takes back the deliveries its previous process had in
-- flight at once instead of waiting out the lease (a live sibling's are left alone).
ALTER TABLE webhook_deliveries ADD COLUMN lease_owner TEXT;
