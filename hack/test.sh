#!/usr/bin/env bash
# Builds Basalt and runs every test: unit tests, then the integration and e2e suites against a
# fresh throwaway cluster (started and torn down by CTest's "cluster" fixture, and torn down
# here too on any exit). Exits non-zero on any failure; ends with ctest's summary line.
#
#   hack/test.sh [ctest args...]     e.g. hack/test.sh -R quantity   or   hack/test.sh -L unit
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T0=$SECONDS
TEST_CLUSTER=$REPO_ROOT/_output/test-cluster
mkdir -p "$REPO_ROOT/_output"

teardown() { "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "$TEST_CLUSTER" --quiet || true; }
trap teardown EXIT

"$HACK_DIR/install-deps.sh"

# Lint: formatting (STYLE.md), and no ';' in Catch test names (CTest would split them).
cd "$REPO_ROOT"
unformatted=$(git ls-files '*.cc' '*.h' | xargs clang-format --dry-run 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u)
if [[ -n $unformatted ]]; then
  hlog "clang-format would change (run: clang-format -i <file>):"
  echo "$unformatted" | sed 's/^/    /' >&2
  exit 1
fi
if grep -rnE 'TEST_CASE\(\s*"[^"]*;' unit-tests/ >&2; then
  hlog "a Catch test name above contains ';' (CTest splits it into two tests)"
  exit 1
fi

t=$SECONDS
hlog "building Basalt (C++) into $BUILD_DIR"
build_basalt >"$REPO_ROOT/_output/build.log" 2>&1 || {
  tail -n 60 "$REPO_ROOT/_output/build.log" >&2
  hlog "C++ build failed (full log: _output/build.log)"
  exit 1
}
hlog "C++ build: $((SECONDS - t))s"

t=$SECONDS
hlog "building the test cluster's control-plane binaries (cached after the first run)"
"$REPO_ROOT/e2e/cluster/build.sh"
hlog "control-plane binaries: $((SECONDS - t))s"

ensure_kubectl

t=$SECONDS
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 900 -j "$(nproc)" "$@" || rc=$?
hlog "tests: $((SECONDS - t))s; total: $((SECONDS - T0))s"
if ((rc != 0)); then
  hlog "logs of the test cluster: $TEST_CLUSTER/logs/"
fi
exit "$rc"
