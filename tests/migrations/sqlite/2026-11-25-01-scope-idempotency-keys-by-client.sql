-- up
alter table "idempotency_keys" rename to "idempotency_keys_old";
create table "idempotency_keys" ("client" text not null, "key" text not null, "fingerprint" text not null, "state" text not null, "outcome" text, "user_id" integer, "locked_until" text not null, "owner" text, "expires_at" text not null, "created_at" text not null, constraint "idempotency_keys_client_key" primary key ("client", "key"));
insert into idempotency_keys (client, "key", fingerprint, state, outcome, user_id, locked_until, owner, expires_at, created_at) select client, "key", fingerprint, state, outcome, user_id, locked_until, owner, expires_at, created_at from idempotency_keys_old where client is not null;
drop table "idempotency_keys_old";
create index "idempotency_keys_expires_at" on "idempotency_keys" ("expires_at");
create index "idempotency_keys_client_created_at" on "idempotency_keys" ("client", "created_at");

-- down
alter table "idempotency_keys" rename to "idempotency_keys_old";
create table "idempotency_keys" ("client" text, "key" text not null, "fingerprint" text not null, "state" text not null, "outcome" text, "user_id" integer, "locked_until" text not null, "owner" text, "expires_at" text not null, "created_at" text not null, constraint "idempotency_keys_key" primary key ("key"));
insert into idempotency_keys (client, "key", fingerprint, state, outcome, user_id, locked_until, owner, expires_at, created_at) select client, "key", fingerprint, state, outcome, user_id, locked_until, owner, expires_at, created_at from idempotency_keys_old where true on conflict do nothing;
drop table "idempotency_keys_old";
create index "idempotency_keys_expires_at" on "idempotency_keys" ("expires_at");
create index "idempotency_keys_client_created_at" on "idempotency_keys" ("client", "created_at");
