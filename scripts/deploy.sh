#!/usr/bin/env bash
# The deploy suite (test/deploy): the project's image (scripts/image.sh, built if missing), the
# chart installed with helm (scripts/monitoring-tools.sh), its pods run by podman in network
# namespaces of their own, on a control plane with kube-controller-manager's node IPAM and kwok
# (scripts/testenv.sh), for all five clouds: aws against moto (scripts/moto.sh), azure and gce
# against their fakes (scripts/azure-fake.sh, scripts/gce-fake.sh), openstack against
# neutron-server (scripts/neutron.sh), hcloud against the Hetzner API fake. Needs root (podman,
# ip netns). Extra arguments are passed to node (e.g. --test-name-pattern=...).
# Env: DEPLOY_TIMEOUT (s, default 2000), DEPLOY_QUIET_SECONDS (the heartbeat window, default 120).
set -euo pipefail
# shellcheck source=scripts/suite-args.sh
source "$(dirname "${BASH_SOURCE[0]}")/suite-args.sh"
check_suite_args "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/testenv.sh build > /dev/null
bash scripts/monitoring-tools.sh build > /dev/null
bash scripts/moto.sh install > /dev/null
bash scripts/azure-fake.sh build > /dev/null
bash scripts/gce-fake.sh build > /dev/null
bash scripts/neutron.sh install > /dev/null
bash scripts/image.sh build
# What the image ships, next to it (CycloneDX).
bash scripts/image.sh sbom dist-image/sbom.cdx.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=len(d["components"]); assert n > 50, n; print(f"[deploy] SBOM: {n} components in {sys.argv[1]}")' dist-image/sbom.cdx.json
while IFS='=' read -r k v; do
  case "$k" in
    KUBE_APISERVER | KUBE_CONTROLLER_MANAGER | KWOK | ETCD | ETCD_KIND | HELM | CONTAINERS_CONF) export "$k=$v" ;;
  esac
done < <(bash scripts/testenv.sh paths && bash scripts/monitoring-tools.sh paths && bash scripts/image.sh env)
echo "[deploy] KUBE_CONTROLLER_MANAGER=$KUBE_CONTROLLER_MANAGER KWOK=$KWOK HELM=$HELM CONTAINERS_CONF=$CONTAINERS_CONF"

# Pods left by an interrupted run (their network namespaces are named crc-pod-<pid>-<n>).
for ns in $(ip netns list 2> /dev/null | awk '$1 ~ /^crc-pod-/ {print $1}'); do
  pid="${ns#crc-pod-}"
  pid="${pid%-*}"
  kill -0 "$pid" 2> /dev/null || ip netns delete "$ns" || true
done

NODE_BIN="$ROOT/node_modules/.bin/node"
start=$SECONDS
rc=0
timeout --kill-after=30 "${DEPLOY_TIMEOUT:-2000}" "$NODE_BIN" --test --test-concurrency=1 \
  --test-reporter=spec "$@" "test/deploy/**/*.test.ts" || rc=$?
echo "[deploy] node --test finished in $((SECONDS - start)) s (rc=$rc)"
exit "$rc"
