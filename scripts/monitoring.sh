#!/usr/bin/env bash
# The chart and monitoring suite (test/monitoring): helm, kustomize and promtool from
# scripts/monitoring-tools.sh, the kube-apiserver and etcd from scripts/testenv.sh (both cached).
# Extra arguments are passed to node (e.g. --test-name-pattern=...).
# Env: MONITORING_TIMEOUT (s, default 600).
set -euo pipefail
# shellcheck source=scripts/suite-args.sh
source "$(dirname "${BASH_SOURCE[0]}")/suite-args.sh"
check_suite_args "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/monitoring-tools.sh build > /dev/null
bash scripts/testenv.sh build > /dev/null
while IFS='=' read -r k v; do
  case "$k" in
    KUBE_APISERVER | ETCD | ETCD_KIND | HELM | KUSTOMIZE | PROMTOOL | PROMETHEUS_OPERATOR_CRDS) export "$k=$v" ;;
  esac
done < <(bash scripts/testenv.sh paths && bash scripts/monitoring-tools.sh paths)
echo "[monitoring] HELM=$HELM KUSTOMIZE=$KUSTOMIZE PROMTOOL=$PROMTOOL"

NODE_BIN="$ROOT/node_modules/.bin/node"
[[ -x "$NODE_BIN" ]] || NODE_BIN="npx --no-install node"
start=$SECONDS
rc=0
# shellcheck disable=SC2086 # NODE_BIN may be "npx --no-install node"
timeout --kill-after=30 "${MONITORING_TIMEOUT:-600}" $NODE_BIN --test --test-concurrency=1 \
  --test-reporter=spec "$@" "test/monitoring/**/*.test.ts" || rc=$?
echo "[monitoring] node --test finished in $((SECONDS - start)) s (rc=$rc)"
exit "$rc"
