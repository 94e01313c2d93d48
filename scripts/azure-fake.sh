#!/usr/bin/env bash
# Builds the Azure fake (testenv/azure-fake: Microsoft's generated armnetwork fake servers served
# over HTTP on loopback) and caches the binary outside the repository, keyed by a hash of the
# wrapper module's sources and the Go version (scripts/go-cached-build.sh).
#
#   scripts/azure-fake.sh build   build (or reuse) the binary; prints AZURE_FAKE=<path>
#   scripts/azure-fake.sh path    print AZURE_FAKE=<path> (empty if not built)
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), AZURE_FAKE_BUILD_TIMEOUT (s, default 1200).
set -euo pipefail
# shellcheck source=scripts/go-cached-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-cached-build.sh"
go_cached_build azure-fake AZURE_FAKE "$@"
