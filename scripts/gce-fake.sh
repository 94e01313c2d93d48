#!/usr/bin/env bash
# Builds the GCE fake (testenv/gce-fake: Google's MockGCE from k8s-cloud-provider served as the
# Compute Engine v1 REST API on loopback) and caches the binary outside the repository, keyed by a
# hash of the module's sources and the Go version (scripts/go-cached-build.sh).
#
#   scripts/gce-fake.sh build   build (or reuse) the binary; prints GCE_FAKE=<path>
#   scripts/gce-fake.sh path    print GCE_FAKE=<path> (empty if not built)
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), GCE_FAKE_BUILD_TIMEOUT (s, default 1200).
set -euo pipefail
# shellcheck source=scripts/go-cached-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-cached-build.sh"
go_cached_build gce-fake GCE_FAKE "$@"
