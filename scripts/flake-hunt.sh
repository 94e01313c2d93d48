#!/usr/bin/env bash
# Flake hunt: runs the real-component suites (integration, e2e, faults) N times
# each with one core kept busy by stress-ng, and records every failure with the
# test's name and seed. Rerun after any change to the suites; docs/reliability.md
# has what earlier hunts found.
#   bash scripts/flake-hunt.sh [N=5]
# Env: FLAKE_HUNT_DIR (default: flake-hunt/ in the repository; one log per run
#      and failures.log), FLAKE_HUNT_SUITES (default "integration e2e faults"),
#      FLAKE_HUNT_LOAD_CPUS (stress-ng workers, default 1; 0 = no load).
# Exit status: 0 when every run passed, 1 otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

N="${1:-5}"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N>=1]" >&2; exit 2; }
OUT="${FLAKE_HUNT_DIR:-$ROOT/flake-hunt}"
SUITES="${FLAKE_HUNT_SUITES:-integration e2e faults}"
LOAD="${FLAKE_HUNT_LOAD_CPUS:-1}"
mkdir -p "$OUT"
FAILURES="$OUT/failures.log"
: >"$FAILURES"

NODE_BIN="$ROOT/node_modules/.bin/node"
[[ -x "$NODE_BIN" ]] || { echo "flake-hunt: run npm ci first (no $NODE_BIN)" >&2; exit 2; }

# Prerequisites as CI installs them (all cached after the first time).
bash scripts/netns-prereqs.sh
bash scripts/moto.sh install
bash scripts/testenv.sh build
while IFS='=' read -r k v; do
  case "$k" in KUBE_APISERVER | ETCD | ETCD_KIND) export "$k=$v" ;; esac
done < <(bash scripts/testenv.sh paths)

load_pid=""
if [[ "$LOAD" -gt 0 ]]; then
  if ! command -v stress-ng >/dev/null; then
    echo "[flake-hunt] installing stress-ng (Debian package)"
    if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq stress-ng >/dev/null
  fi
  stress-ng --cpu "$LOAD" --cpu-method matrixprod --timeout 0 --quiet &
  load_pid=$!
  echo "[flake-hunt] load: stress-ng --cpu $LOAD (pid $load_pid)"
fi
stop_load() { if [[ -n "$load_pid" ]]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi; }
trap stop_load EXIT

# One suite run; spec output to the run's log.
run_suite() {
  local suite=$1 log=$2
  case "$suite" in
    integration) bash scripts/integration.sh ;;
    e2e) timeout --kill-after=30 1200 "$NODE_BIN" --test --test-concurrency=1 --test-reporter=spec "test/e2e/**/*.test.ts" ;;
    faults) timeout --kill-after=30 1500 "$NODE_BIN" --test --test-concurrency=1 --test-reporter=spec "test/faults/**/*.test.ts" ;;
    *) echo "unknown suite $suite" >&2; return 2 ;;
  esac >"$log" 2>&1
}

# The failed tests of a spec log, each with the seed lines printed under it.
failed_tests() {
  sed -n '/failing tests:/q;p' "$1" | awk '
    /^ *✖ / { name = $0; sub(/^ *✖ /, "", name); print "  FAIL " name; inside = 1; next }
    /^ *(✔|▶|﹣) / { inside = 0 }
    inside && /ℹ seed / { s = $0; sub(/^ *ℹ /, "", s); print "       " s }'
}

total=0
failed=0
summary=()
for i in $(seq 1 "$N"); do
  for suite in $SUITES; do
    log="$OUT/$suite-$i.log"
    start=$SECONDS
    rc=0
    run_suite "$suite" "$log" || rc=$?
    secs=$((SECONDS - start))
    total=$((total + 1))
    line="$(date -u +%FT%TZ) $suite run $i/$N: rc=$rc in ${secs}s"
    echo "[flake-hunt] $line"
    summary+=("$line")
    if [[ $rc -ne 0 ]]; then
      failed=$((failed + 1))
      {
        echo "$line (log: $log)"
        failed_tests "$log"
        grep -E '^ *ℹ (pass|fail|cancelled) ' "$log" | sed 's/^ */       /'
      } >>"$FAILURES"
    fi
  done
done

echo
echo "[flake-hunt] $failed of $total suite runs failed (load: $LOAD stress-ng cpu worker(s))"
printf '  %s\n' "${summary[@]}"
if [[ $failed -gt 0 ]]; then
  echo "[flake-hunt] failures (also in $FAILURES):"
  cat "$FAILURES"
  exit 1
fi
