-- up
create index users_email_order on users (email_key, id, first_name_key, last_name_key);
create index users_first_order on users (first_name_key, id, last_name_key, email_key);
create index users_last_order on users (last_name_key, id, first_name_key, email_key);
create index users_first_last_order on users (first_name_key, last_name_key, id, email_key);
create index users_first_last_desc_order on users (first_name_key, last_name_key desc, id desc, email_key);
create index users_last_first_order on users (last_name_key, first_name_key, id, email_key);
create index users_last_first_desc_order on users (last_name_key, first_name_key desc, id desc, email_key);
create index users_first_email_order on users (first_name_key, email_key, id, last_name_key);
create index users_first_email_desc_order on users (first_name_key, email_key desc, id desc, last_name_key);
create index users_last_email_order on users (last_name_key, email_key, id, first_name_key);
create index users_last_email_desc_order on users (last_name_key, email_key desc, id desc, first_name_key);
drop index users_email_key_id;
drop index users_first_name_key_id;
drop index users_last_name_key_id;

-- down
create index users_email_key_id on users (email_key, id);
create index users_first_name_key_id on users (first_name_key, id);
create index users_last_name_key_id on users (last_name_key, id);
drop index users_email_order;
drop index users_first_order;
drop index users_last_order;
drop index users_first_last_order;
drop index users_first_last_desc_order;
drop index users_last_first_order;
drop index users_last_first_desc_order;
drop index users_first_email_order;
drop index users_first_email_desc_order;
drop index users_last_email_order;
drop index users_last_email_desc_order;
