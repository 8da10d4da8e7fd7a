-- up
create virtual table users_search using fts5(keys, content='', contentless_delete=1, tokenize='trigram case_sensitive 1');
insert into users_search (rowid, keys) select id, first_name_key || char(10) || last_name_key || char(10) || email_key from users;
create trigger users_search_insert after insert on users begin
       insert into users_search (rowid, keys) values (new.id, new.first_name_key || char(10) || new.last_name_key || char(10) || new.email_key); end;
create trigger users_search_update after update of first_name_key, last_name_key, email_key on users  begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, new.first_name_key || char(10) || new.last_name_key || char(10) || new.email_key); end;
create trigger users_search_delete after delete on users begin delete from users_search where rowid = old.id; end;

-- down
drop trigger users_search_insert;
drop trigger users_search_update;
drop trigger users_search_delete;
drop table users_search;
