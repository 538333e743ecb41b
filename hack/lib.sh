# shellcheck shell=bash
# Shared by hack/*.sh. Source it.
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HACK_DIR/.." && pwd)
BUILD_DIR=${BASALT_BUILD_DIR:-$REPO_ROOT/_output/build}
export CCACHE_DIR=${CCACHE_DIR:-${BASALT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/basalt}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Paths under the checkout are hashed relative to the build directory, so two clones or worktrees
# of the same commit share ccache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO_ROOT}

hlog() { printf '%s [%s] %s\n' "$(date +%H:%M:%S)" "$(basename "$0" .sh)" "$*" >&2; }

# build_basalt [extra cmake args...]: configure (once) and build everything into $BUILD_DIR.
build_basalt() {
  local jobs
  jobs=$(nproc)
  if [[ ! -f $BUILD_DIR/build.ninja ]]; then
    cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -G Ninja "$@" >"$REPO_ROOT/_output/cmake-configure.log" 2>&1 || {
      tail -n 40 "$REPO_ROOT/_output/cmake-configure.log" >&2
      hlog "cmake configure failed (full log: _output/cmake-configure.log)"
      return 1
    }
  fi
  cmake --build "$BUILD_DIR" -j "$jobs"
}

# ensure_kubectl: a kubectl on PATH. When there is none, builds the pinned one (the cluster's
# Kubernetes version, cached like the control-plane binaries) and puts its directory first on
# PATH for this script and what it starts (ctest, the e2e tests).
ensure_kubectl() {
  command -v kubectl >/dev/null 2>&1 && return 0
  hlog "no kubectl on PATH: building the pinned one (e2e/cluster/build.sh --with-kubectl)"
  "$REPO_ROOT/e2e/cluster/build.sh" --with-kubectl
  local bin
  # shellcheck source=../e2e/cluster/lib.sh
  bin=$(source "$REPO_ROOT/e2e/cluster/lib.sh" && find_bin kubernetes "$KUBERNETES_VERSION" kubectl) || {
    hlog "no kubectl binary after e2e/cluster/build.sh --with-kubectl"
    return 1
  }
  PATH="$(dirname "$bin"):$PATH"
  export PATH
}
