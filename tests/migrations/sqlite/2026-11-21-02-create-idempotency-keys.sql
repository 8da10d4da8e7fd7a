-- up
create table "idempotency_keys" ("key" text primary key, "fingerprint" text not null, "state" text not null, "outcome" text, "user_id" integer, "locked_until" text not null, "expires_at" text not null, "created_at" text not null);
create index "idempotency_keys_expires_at" on "idempotency_keys" ("expires_at");

-- down
drop table "idempotency_keys";
