#!/usr/bin/env bash
# Replaces every instance of the compose topology (compose.yaml) with a container of the image its tag names
# now (make image), one at a time, without failing a request: first the migrations, as the new version (a
# container of its own, which must exit 0); then, for each instance, through HAProxy's runtime API: drain it (no
# new requests), wait until it holds no request, stop it with SIGTERM (it answers what it had received),
# replace its container, and put it back once HAProxy's readiness check finds the new one ready. The other
# instance serves meanwhile, and HAProxy sends a request that found the stopping one gone to it.
#
#   deploy/rolling-restart.sh            # PROJECT=user-records, INSTANCES="app1 app2", podman-compose
#
# Needs root (the runtime API's socket is on a volume), socat, and the compose tool the topology was started
# with. Prints one line per step on standard error; exits 1 at the first step that fails, with the instance
# it was on out of HAProxy's rotation (the others serve), and says which.
set -euo pipefail
cd "$(dirname "$0")/.."
PROJECT=${PROJECT:-user-records}
INSTANCES=${INSTANCES:-app1 app2}
ENGINE=${ENGINE:-podman}
COMPOSE=${COMPOSE:-podman-compose}
# How long a step may take: an instance holding a long request, or a new one starting on a busy machine.
STEP_TIMEOUT_SECONDS=${STEP_TIMEOUT_SECONDS:-60}

say() { echo "rolling-restart: $*" >&2; }
fail() { say "$*"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# What the tools print (podman-compose 1.0 an error for each service that already runs, podman without systemd
# one for each container's health check timer) is shown only when a step fails.
compose() { "$COMPOSE" -p "$PROJECT" "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "$COMPOSE $* failed"; }; }
container_of() {
  "$ENGINE" ps -a -q --filter "label=com.docker.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1"
}

volume=$("$ENGINE" volume inspect --format '{{.Mountpoint}}' "${PROJECT}_haproxy-admin" 2>/dev/null) ||
  fail "no volume ${PROJECT}_haproxy-admin: is the topology of project $PROJECT up?"
socket=$volume/admin.sock
api() { printf '%s\n' "$1" | socat -t 5 stdio "unix-connect:$socket"; }
# A server's column of `show stat` (CSV; the columns are named in its first line): status (UP, DOWN, MAINT,
# DRAIN, …) or scur (the requests it holds).
stat_of() {
  api 'show stat' | awk -F, -v server="$1" -v column="$2" '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) at[$i] = i; next }
    $1 == "instances" && $2 == server { split($at[column], value, " "); print value[1] }'
}
wait_until() {
  local what=$1 deadline=$((SECONDS + STEP_TIMEOUT_SECONDS))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || fail "$what: not within $STEP_TIMEOUT_SECONDS s"
    sleep 0.2
  done
}
is_up() { [ "$(stat_of "$1" status)" = UP ]; }
is_idle() { [ "$(stat_of "$1" scur)" = 0 ]; }
api 'show info' | grep -q '^Name: HAProxy' || fail "HAProxy does not answer on $socket"

# 1. The migrations, as the new version: a new container of the migrate service, which must exit 0.
old=$(container_of migrate)
[ -z "$old" ] || "$ENGINE" rm -f "$old" >"$log" 2>&1 || { cat "$log" >&2; fail "could not remove the last migration's container"; }
compose up -d migrate
migrate=$(container_of migrate)
status=$("$ENGINE" wait "$migrate")
[ "$status" = 0 ] || { "$ENGINE" logs "$migrate" >&2; fail "the migration exited with $status; no instance was touched"; }
say "migrated"

# 2. Each instance in turn.
for instance in $INSTANCES; do
  old=$(container_of "$instance")
  [ -n "$old" ] || fail "$instance: no container of project $PROJECT"
  api "set server instances/$instance state drain" >/dev/null
  wait_until "$instance drained" is_idle "$instance"
  "$ENGINE" stop -t 10 "$old" >"$log" 2>&1 || { cat "$log" >&2; fail "$instance: could not stop ${old:0:12}"; }
  api "set server instances/$instance state maint" >/dev/null
  "$ENGINE" rm "$old" >"$log" 2>&1 || { cat "$log" >&2; fail "$instance: could not remove ${old:0:12}"; }
  compose up -d "$instance"
  api "set server instances/$instance state ready" >/dev/null
  wait_until "$instance up again (left in maintenance: the other instances serve)" is_up "$instance"
  say "$instance replaced: $(container_of "$instance" | cut -c1-12) for ${old:0:12}"
done
say "done"
