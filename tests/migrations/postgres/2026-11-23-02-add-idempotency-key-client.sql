-- up
alter table "idempotency_keys" add column "client" text;
create index "idempotency_keys_client_created_at" on "idempotency_keys" ("client", "created_at");

-- down
drop index "idempotency_keys_client_created_at";
alter table "idempotency_keys" drop column "client";
