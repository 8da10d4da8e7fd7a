#!/bin/sh
# The roles of the service's database, made once when PostgreSQL's data folder is new: PostgreSQL's image runs
# the scripts of /docker-entrypoint-initdb.d/ as its superuser (compose.yaml mounts this one there). The
# superuser (POSTGRES_USER) owns the schema and runs the migrations; APP_ROLE, which the instances connect as,
# reads and writes rows and cannot change the schema: an instance that is taken over cannot drop a table, add a
# trigger or read another database's data. Tables and sequences the migrations make later are granted to it as
# they are made (default privileges).
set -eu
: "${APP_ROLE:=user_records_app}"
: "${APP_PASSWORD:?set APP_PASSWORD}"
psql -v ON_ERROR_STOP=1 -v app="$APP_ROLE" -v password="$APP_PASSWORD" -v owner="$POSTGRES_USER" -v database="$POSTGRES_DB" \
  --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE :"app" LOGIN PASSWORD :'password';
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON DATABASE :"database" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"database" TO :"app";
GRANT USAGE ON SCHEMA public TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO :"app";
SQL
