-- up
savepoint install_pg_trgm;
create extension if not exists pg_trgm;
release savepoint install_pg_trgm;
create function users_holding(pattern text, most integer) returns table (match_id integer) language sql stable rows 20
      set enable_seqscan = off set enable_indexscan = off
      as $$ select id from users where (first_name_key || E'\n' || last_name_key || E'\n' || email_key) like pattern limit most $$;
select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm';
create index users_search on users using gin ((first_name_key || E'\n' || last_name_key || E'\n' || email_key) "<pg_trgm's schema>".gin_trgm_ops);

-- down
drop index if exists users_search;
drop function users_holding(text, integer);
