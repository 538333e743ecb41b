# shellcheck shell=bash
# Shared by hack/*.sh. Source it.
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HACK_DIR/.." && pwd)
BUILD_DIR=${BASALT_BUILD_DIR:-$REPO_ROOT/_output/build}
export CCACHE_DIR=${CCACHE_DIR:-${BASALT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/basalt}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

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
