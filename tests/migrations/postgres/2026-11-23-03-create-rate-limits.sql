-- up
create table "rate_limits" ("key" varchar(255) primary key, "points" integer default 0 not null, "expire" bigint);

-- down
drop table "rate_limits";
