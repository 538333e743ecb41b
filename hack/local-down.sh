#!/usr/bin/env bash
# Stops everything hack/local-up.sh started (Basalt components and the local cluster).
#   --purge   also delete _output/local (etcd data, certificates, logs)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exec "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "$REPO_ROOT/_output/local" "$@"
