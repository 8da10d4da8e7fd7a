-- up
alter table "users" add column "first_name_key" text default '' not null;
alter table "users" add column "last_name_key" text default '' not null;
alter table "users" add column "email_key" text default '' not null;
select id, first_name, last_name, email from users where id > ? order by id limit ?;
-- parameters: [0,500]
create index "users_first_name_key_id" on "users" ("first_name_key", "id");
create index "users_last_name_key_id" on "users" ("last_name_key", "id");
create index "users_email_key_id" on "users" ("email_key", "id");

-- down
drop index "users_first_name_key_id";
alter table "users" drop column "first_name_key";
drop index "users_last_name_key_id";
alter table "users" drop column "last_name_key";
drop index "users_email_key_id";
alter table "users" drop column "email_key";
