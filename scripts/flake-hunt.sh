#!/usr/bin/env bash
# Flake hunt: runs the real-component suites N times each, as CI runs them
# (integration, monitoring, e2e, faults, and the cloud faults with the route
# cache off), with one core kept busy by stress-ng, and records every failure
# with the test seed and the failing tests' names.
#
#   bash scripts/flake-hunt.sh [N]          (default 5)
#
# Env: TEST_SEED (default: a new seed per round, printed), FLAKE_LOG (default
# flake-hunt/<UTC time>/), FLAKE_SUITES (default "integration monitoring e2e
# faults faults-nocache"),
# FLAKE_STRESS_CPUS (default 1; 0 runs without load).
# Exit status: 0 if every run passed, 1 otherwise. The summary is in
# $FLAKE_LOG/summary.txt, one line per run.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
case "${1:-}" in
  -h | --help)
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
  "" | [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
  *)
    echo "error: N must be a whole number from 1 to 999, got '$1' (usage: $0 [N])" >&2
    exit 2
    ;;
esac
N="${1:-5}"
SUITES="${FLAKE_SUITES:-integration monitoring e2e faults faults-nocache}"
STRESS_CPUS="${FLAKE_STRESS_CPUS:-1}"
OUT="${FLAKE_LOG:-$ROOT/flake-hunt/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

log() { printf '[flake-hunt %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$OUT/hunt.log"; }

if [[ "$STRESS_CPUS" -gt 0 ]] && ! command -v stress-ng >/dev/null 2>&1; then
  log "installing stress-ng (Debian)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng) >>"$OUT/hunt.log" 2>&1 ||
    { log "stress-ng could not be installed"; exit 2; }
fi

# The suites' prerequisites, as CI builds them (cache hits after the first time).
bash scripts/netns-prereqs.sh >>"$OUT/hunt.log" 2>&1
bash scripts/moto.sh install >>"$OUT/hunt.log" 2>&1
bash scripts/testenv.sh build >>"$OUT/hunt.log" 2>&1 || { log "testenv build failed"; exit 2; }
if [[ " $SUITES " == *" monitoring "* ]]; then
  bash scripts/monitoring-tools.sh build >>"$OUT/hunt.log" 2>&1 || { log "monitoring tools build failed"; exit 2; }
fi

stress_pid=""
stop_stress() { [[ -n "$stress_pid" ]] && kill "$stress_pid" 2>/dev/null; wait "$stress_pid" 2>/dev/null; stress_pid=""; }
trap stop_stress EXIT
if [[ "$STRESS_CPUS" -gt 0 ]]; then
  stress-ng --cpu "$STRESS_CPUS" --cpu-method matrixprod --quiet &
  stress_pid=$!
  log "stress-ng loading $STRESS_CPUS core(s) (pid $stress_pid)"
fi

run_suite() {
  case "$1" in
    integration) npm run test:integration ;;
    e2e) npm run test:e2e ;;
    faults) npm run test:faults ;;
    monitoring) npm run test:monitoring ;;
    # The stage CI runs after the fault suite, with every list going to the cloud.
    faults-nocache) ROUTE_CACHE=false node_modules/.bin/node --test --test-concurrency=1 test/faults/cloud.test.ts ;;
    *) echo "unknown suite $1" >&2; return 2 ;;
  esac
}

failed=0
commit="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
log "commit $commit, $N round(s) of: $SUITES; logs in $OUT"
for round in $(seq 1 "$N"); do
  seed="${TEST_SEED:-$(( (RANDOM << 15 | RANDOM) + round ))}"
  for suite in $SUITES; do
    file="$OUT/round$round-$suite.log"
    start=$SECONDS
    TEST_SEED="$seed" run_suite "$suite" >"$file" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    load="$(cut -d' ' -f1 /proc/loadavg)"
    if [[ $rc -eq 0 ]]; then
      line="round $round $suite PASS ${secs}s seed $seed load $load"
    else
      failed=$((failed + 1))
      # node:test lists the failing tests after "✖ failing tests:".
      names="$(sed -n '/failing tests:/,$p' "$file" | grep -E '^✖ ' | sed 's/^✖ //; s/ ([0-9.]*ms)$//' | sort -u | paste -sd ';' -)"
      line="round $round $suite FAIL(rc=$rc) ${secs}s seed $seed load $load: ${names:-see $file}"
    fi
    echo "$line" >>"$SUMMARY"
    log "$line"
  done
done
stop_stress
log "done: $failed failed run(s) of $((N * $(wc -w <<<"$SUITES")))"
[[ $failed -eq 0 ]]
