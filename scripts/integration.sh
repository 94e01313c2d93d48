#!/usr/bin/env bash
# Integration tests against a real kube-apiserver + etcd (TESTENV.md).
#   1. scripts/testenv.sh build   (cached; cold 10-20 min on 2 cores)
#   2. scripts/azure-fake.sh build (cached; cold about 2 min: Microsoft's armnetwork fake servers)
#      scripts/neutron.sh install (cached; cold about 2 min: neutron-server from PyPI, pinned)
#      scripts/keystone.sh install (cached; cold about 3 min: keystone from PyPI, pinned, and its template database)
#      scripts/gce-fake.sh build (cached; cold about 3 min: Google's MockGCE as the Compute Engine API)
#      scripts/aws-upstream.sh build (cached; cold about 4 min: cloud-provider-aws's own route code)
#      scripts/gce-upstream.sh build (cached; cold about 3 min: cloud-provider-gcp's own route code)
#   3. node --test --test-concurrency=1 "test/integration/**/*.test.ts" with the pinned Node 24
# Extra arguments are passed to node (e.g. --test-name-pattern=...).
# Env: TESTENV_BUILD_STAGE_TIMEOUT (s, default 3600), INTEGRATION_TIMEOUT (s, default 1200),
#      KEEP_TESTENV=1 keeps each control plane's temp directory.
set -euo pipefail
# shellcheck source=scripts/suite-args.sh
source "$(dirname "${BASH_SOURCE[0]}")/suite-args.sh"
check_suite_args "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

timeout "${TESTENV_BUILD_STAGE_TIMEOUT:-3600}" bash scripts/testenv.sh build

# Hand the resolved binaries to the tests explicitly.
while IFS='=' read -r k v; do
  case "$k" in
    KUBE_APISERVER | ETCD | ETCD_KIND) export "$k=$v" ;;
  esac
done < <(bash scripts/testenv.sh paths)
echo "[integration] KUBE_APISERVER=$KUBE_APISERVER ETCD=$ETCD (${ETCD_KIND})"

# The Go binaries of testenv (scripts/go-cached-build.sh): build or reuse, export each one's path.
for pair in azure-fake:AZURE_FAKE gce-fake:GCE_FAKE aws-upstream:AWS_UPSTREAM gce-upstream:GCE_UPSTREAM; do
  script="${pair%%:*}" var="${pair##*:}"
  timeout "${TESTENV_BUILD_STAGE_TIMEOUT:-3600}" bash "scripts/$script.sh" build > /dev/null
  value="$(bash "scripts/$script.sh" path | sed -n "s/^$var=//p")"
  export "$var=$value"
  echo "[integration] $var=$value"
done

# neutron-server from PyPI in a cached venv (cold about 2 min): the openstack plug-in's tests.
timeout "${TESTENV_BUILD_STAGE_TIMEOUT:-3600}" bash scripts/neutron.sh install
NEUTRON_PYTHON="$(bash scripts/neutron.sh path | sed -n 's/^NEUTRON_PYTHON=//p')"
export NEUTRON_PYTHON
echo "[integration] NEUTRON_PYTHON=$NEUTRON_PYTHON"

# Keystone from PyPI in a cached venv with a template database (cold about 3 min): the openstack
# tests that authenticate against the real identity service.
timeout "${TESTENV_BUILD_STAGE_TIMEOUT:-3600}" bash scripts/keystone.sh install
while IFS='=' read -r k v; do
  case "$k" in
    KEYSTONE_PYTHON | KEYSTONE_TEMPLATE) export "$k=$v" ;;
  esac
done < <(bash scripts/keystone.sh path)
echo "[integration] KEYSTONE_PYTHON=$KEYSTONE_PYTHON"

# The pinned Node 24 (devDependency "node"), never the system node, runs the .ts files.
NODE_BIN="$ROOT/node_modules/.bin/node"
[[ -x "$NODE_BIN" ]] || NODE_BIN="npx --no-install node"

start=$SECONDS
rc=0
# shellcheck disable=SC2086 # NODE_BIN may be "npx --no-install node"
timeout --kill-after=30 "${INTEGRATION_TIMEOUT:-1200}" $NODE_BIN --test --test-concurrency=1 \
  --test-reporter=spec "$@" "test/integration/**/*.test.ts" || rc=$?
echo "[integration] node --test finished in $((SECONDS - start)) s (rc=$rc)"
exit "$rc"
