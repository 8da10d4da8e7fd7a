-- up
drop trigger users_search_update;
create trigger users_search_update after update of first_name_key, last_name_key, email_key on users when old.first_name_key is not new.first_name_key or old.last_name_key is not new.last_name_key or old.email_key is not new.email_key begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, new.first_name_key || char(10) || new.last_name_key || char(10) || new.email_key); end;

-- down
drop trigger users_search_update;
create trigger users_search_update after update of first_name_key, last_name_key, email_key on users  begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, new.first_name_key || char(10) || new.last_name_key || char(10) || new.email_key); end;
