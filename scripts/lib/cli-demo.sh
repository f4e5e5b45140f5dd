#!/usr/bin/env bash
# The core alone, through the CLI (./scripts/demo --cli): a private MariaDB, a
# series created at a starting number, 8 OS processes allocating from it at
# the same time through the `counterfoil` CLI, then every number printed and
# checked: no duplicate, no gap. Expects the release binaries built.
#
#   ./scripts/demo --cli [PROCESSES] [CALLS_PER_PROCESS]     (default 8 25)
set -euo pipefail
source "$(dirname "$0")/setup.sh"
cd "$ROOT"

PROCS=${1:-8}
CALLS=${2:-25}
SCOPE="42:2026"
START=1001
FORMAT='{year}-{seq:04}'

DEMO=target/demo
rm -rf "$DEMO"; mkdir -p "$DEMO"
ENV_FILE="$DEMO/mariadb.env"

log "starting a private MariaDB under target/"
target/release/harness-mariadb demo counterfoil_demo "$ENV_FILE" &
HARNESS_PID=$!
cleanup() {
  kill -TERM "$HARNESS_PID" 2>/dev/null || true
  wait "$HARNESS_PID" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 600); do
  [ -f "$ENV_FILE" ] && break
  kill -0 "$HARNESS_PID" 2>/dev/null || { echo "demo: MariaDB did not start" >&2; exit 2; }
  sleep 0.1
done
[ -f "$ENV_FILE" ] || { echo "demo: MariaDB not ready in 60 s" >&2; exit 2; }
set -a; source "$ENV_FILE"; set +a
echo "DATABASE_URL=$DATABASE_URL"

CF=target/release/counterfoil
log "creating series $SCOPE starting at $START"
$CF series init "$SCOPE" --start "$START"

log "$PROCS processes x $CALLS allocations, all at once, through the CLI"
GO="$DEMO/go"
pids=()
for w in $(seq 1 "$PROCS"); do
  (
    while [ ! -e "$GO" ]; do sleep 0.01; done
    for _ in $(seq 1 "$CALLS"); do
      $CF series allocate "$SCOPE" --format "$FORMAT"
    done > "$DEMO/worker-$w.txt"
  ) &
  pids+=($!)
done
touch "$GO"
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || { echo "demo: a worker failed" >&2; exit 1; }

for w in $(seq 1 "$PROCS"); do
  printf 'process %d: %s\n' "$w" "$(tr '\n' ' ' < "$DEMO/worker-$w.txt")"
done

TOTAL=$((PROCS * CALLS))
LAST=$((START + TOTAL - 1))
cat "$DEMO"/worker-*.txt | sort > "$DEMO/all.txt"
got=$(wc -l < "$DEMO/all.txt")
unique=$(sort -u "$DEMO/all.txt" | wc -l)
dups=$(uniq -d "$DEMO/all.txt" | wc -l)
# Expected: 2026-1001 .. 2026-(START+TOTAL-1), rendered with the same template.
expected=$(for n in $(seq "$START" "$LAST"); do printf '2026-%04d\n' "$n"; done | sort)
missing=$(comm -13 "$DEMO/all.txt" <(echo "$expected") | wc -l)
extra=$(comm -23 <(sort -u "$DEMO/all.txt") <(echo "$expected") | wc -l)
counter=$($CF --json series show "$SCOPE" | sed -n 's/.*"current":\([0-9]*\).*/\1/p')

echo
echo "numbers handed out : $got (expected $TOTAL)"
echo "distinct           : $unique"
echo "duplicates         : $dups"
echo "gaps (missing)     : $missing"
echo "outside the range  : $extra"
echo "series counter     : $counter (expected $LAST)"
if [ "$got" -eq "$TOTAL" ] && [ "$dups" -eq 0 ] && [ "$missing" -eq 0 ] && [ "$extra" -eq 0 ] \
   && [ "$counter" -eq "$LAST" ]; then
  printf '\nOK: %d processes, %d numbers, 2026-%04d .. 2026-%04d, no duplicate, no gap.\n' \
    "$PROCS" "$TOTAL" "$START" "$LAST"
else
  echo "FAILED: the check found a problem" >&2
  exit 1
fi
