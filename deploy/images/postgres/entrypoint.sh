#!/bin/sh
# The official image's start, as far as compose.yaml uses it: on a new data folder, initdb with POSTGRES_USER
# and POSTGRES_PASSWORD, the database POSTGRES_DB, and the scripts of /docker-entrypoint-initdb.d/ run once
# against a server that listens on its socket only; then PostgreSQL on every address, passwords required.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
export POSTGRES_USER POSTGRES_DB
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$password"
  initdb --username="$POSTGRES_USER" --pwfile="$password" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  pg_ctl --wait --silent --options="-c listen_addresses=''" start
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --quiet --username="$POSTGRES_USER" --dbname=postgres -v db="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"db";
SQL
  fi
  for script in /docker-entrypoint-initdb.d/*; do
    case $script in
      *.sh) echo "running $script"; sh "$script" ;;
      *.sql) echo "running $script"; psql -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" --dbname="$POSTGRES_DB" -f "$script" ;;
    esac
  done
  pg_ctl --wait --silent --mode=fast stop
  echo 'PostgreSQL init process complete'
fi
if [ "${1:-}" = postgres ]; then shift; exec postgres -c listen_addresses='*' "$@"; fi
exec "$@"
