# shellcheck shell=bash
# Shared helpers for e2e/cluster scripts. Source it; do not run it.

CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$CLUSTER_DIR/../.." && pwd)
# shellcheck source=versions.env
set -a; source "$CLUSTER_DIR/versions.env"; set +a

BASALT_CACHE_DIR=${BASALT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/basalt}
STATE_DIR=${BASALT_STATE_DIR:-$REPO_ROOT/_output/local}

log() { printf '%s [cluster] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s [cluster] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

go_env() {
  export GOMODCACHE="$BASALT_CACHE_DIR/go/mod"
  export GOCACHE="$BASALT_CACHE_DIR/go/build"
  export GOFLAGS="-modcacherw -buildvcs=false"
  export GOTOOLCHAIN=local
  export CGO_ENABLED=0
  export GOWORK=off
}

go_version() {
  command -v go >/dev/null 2>&1 || return 1
  go env GOVERSION
}

# bin_path COMPONENT VERSION BINARY -> cached binary path (may not exist yet)
bin_path() {
  local gv
  gv=$(go_version 2>/dev/null || echo nogo)
  echo "$BASALT_CACHE_DIR/bin/$1-$2-$gv/$3"
}

# A binary built by an earlier run with any Go version is fine to reuse when Go is absent.
find_bin() {
  local p
  p=$(bin_path "$1" "$2" "$3")
  if [[ -x $p ]]; then echo "$p"; return 0; fi
  for p in "$BASALT_CACHE_DIR"/bin/"$1-$2"-*/"$3"; do
    [[ -x $p ]] && { echo "$p"; return 0; }
  done
  return 1
}
