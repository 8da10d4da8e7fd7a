-- up
create table "user_count" ("shard" integer primary key, "n" bigint not null);
insert into "user_count" ("shard", "n") values ($1, $2), ($3, $4), ($5, $6), ($7, $8), ($9, $10), ($11, $12), ($13, $14), ($15, $16), ($17, $18), ($19, $20), ($21, $22), ($23, $24), ($25, $26), ($27, $28), ($29, $30), ($31, $32);
-- parameters: [0,0,1,0,2,0,3,0,4,0,5,0,6,0,7,0,8,0,9,0,10,0,11,0,12,0,13,0,14,0,15,0]
update user_count set n = (select count(*) from users where users.id % 16 = user_count.shard);
create function users_counted_insert() returns trigger language plpgsql as $$
             declare changed record;
             begin
               for changed in select id % 16 as shard, count(*) as k from changed_rows group by 1 order by 1 loop
                 update user_count set n = n + changed.k where shard = changed.shard;
               end loop;
               return null;
             end $$;
create trigger users_counted_insert after insert on users referencing new table as changed_rows
             for each statement execute function users_counted_insert();
create function users_counted_delete() returns trigger language plpgsql as $$
             declare changed record;
             begin
               for changed in select id % 16 as shard, count(*) as k from changed_rows group by 1 order by 1 loop
                 update user_count set n = n - changed.k where shard = changed.shard;
               end loop;
               return null;
             end $$;
create trigger users_counted_delete after delete on users referencing old table as changed_rows
             for each statement execute function users_counted_delete();

-- down
drop trigger users_counted_insert on users;
drop function users_counted_insert();
drop trigger users_counted_delete on users;
drop function users_counted_delete();
drop table "user_count";
