-- up
create table "user_count" ("shard" integer primary key, "n" bigint not null);
insert into "user_count" ("shard", "n") values (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?);
-- parameters: [0,0,1,0,2,0,3,0,4,0,5,0,6,0,7,0,8,0,9,0,10,0,11,0,12,0,13,0,14,0,15,0]
update user_count set n = (select count(*) from users where users.id % 16 = user_count.shard);
create trigger users_counted_insert after insert on users begin update user_count set n = n + 1 where shard = new.id % 16; end;
create trigger users_counted_delete after delete on users begin update user_count set n = n - 1 where shard = old.id % 16; end;

-- down
drop trigger users_counted_insert;
drop trigger users_counted_delete;
drop table "user_count";
