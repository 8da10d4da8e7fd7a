-- up
create function users_matching(key text, needle text, most integer) returns table (match_id integer) language sql stable rows 20
       set enable_seqscan = off set enable_indexscan = off
       as $$ select id from users where (first_name_key || E'\n' || last_name_key || E'\n' || email_key) like key and strpos(first_name_key || E'\n' || last_name_key || E'\n' || email_key, needle) > 0 limit most $$;

-- down
drop function users_matching(text, text, integer);
