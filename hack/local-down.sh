#!/usr/bin/env bash
# Stops everything hack/local-up.sh started (Basalt components and the local cluster).
#   --purge   also delete _output/local (etcd data, certificates, logs)
# BASALT_LOCAL_DIR overrides the state directory, as for hack/local-up.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exec "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "${BASALT_LOCAL_DIR:-$REPO_ROOT/_output/local}" "$@"
