#!/usr/bin/env bash
# Builds cloud-provider-aws's own route code (testenv/aws-upstream: k8s.io/cloud-provider-aws's
# Routes interface behind a small command line, run against moto by the aws handover test) and
# caches the binary outside the repository, keyed by a hash of the module's sources and the Go
# version (scripts/go-cached-build.sh).
#
#   scripts/aws-upstream.sh build   build (or reuse) the binary; prints AWS_UPSTREAM=<path>
#   scripts/aws-upstream.sh path    print AWS_UPSTREAM=<path> (empty if not built)
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), AWS_UPSTREAM_BUILD_TIMEOUT (s, default 1200).
set -euo pipefail
# shellcheck source=scripts/go-cached-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-cached-build.sh"
go_cached_build aws-upstream AWS_UPSTREAM "$@"
