-- up
create table "users" ("id" integer primary key autoincrement, "first_name" text not null, "last_name" text not null, "email" text not null, "created_at" text not null, "updated_at" text not null, "version" integer default 1 not null);
create table "service_meta" ("key" text primary key, "value" text not null);

-- down
drop table "service_meta";
drop table "users";
