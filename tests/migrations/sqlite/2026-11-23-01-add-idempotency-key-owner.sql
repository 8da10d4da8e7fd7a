-- up
alter table "idempotency_keys" add column "owner" text;

-- down
alter table "idempotency_keys" drop column "owner";
