#!/usr/bin/env bash
# Builds cloud-provider-gcp's own route code (testenv/gce-upstream: the gce Cloud of
# k8s.io/cloud-provider-gcp/providers behind a small command line, run against the GCE fake by the
# gce handover test) and caches the binary outside the repository, keyed by a hash of the module's
# sources and the Go version (scripts/go-cached-build.sh).
#
#   scripts/gce-upstream.sh build   build (or reuse) the binary; prints GCE_UPSTREAM=<path>
#   scripts/gce-upstream.sh path    print GCE_UPSTREAM=<path> (empty if not built)
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), GCE_UPSTREAM_BUILD_TIMEOUT (s, default 1200).
set -euo pipefail
# shellcheck source=scripts/go-cached-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-cached-build.sh"
go_cached_build gce-upstream GCE_UPSTREAM "$@"
