#!/usr/bin/env bash
# Builds Basalt and runs every test: unit tests, then the integration and e2e suites against a
# fresh throwaway cluster (started and torn down by CTest's "cluster" fixture, and torn down
# here too on any exit). Exits non-zero on any failure; ends with ctest's summary line.
#
#   hack/test.sh [ctest args...]     e.g. hack/test.sh -R quantity   or   hack/test.sh -L unit
#
# Unless BASALT_SANITIZERS=0 (or ctest arguments are given, which select a subset), the
# sanitizer and fuzz stages of hack/test-sanitizers.sh run in the background while ctest runs
# the suites, in their own Clang build tree, niced: by default the ASan+UBSan unit and
# integration tests and each fuzzer for BASALT_FUZZ_TIME seconds, then the TSan unit and
# integration tests of the threaded code (BASALT_SANITIZER_STAGES, default asan,fuzz,tsan;
# BASALT_ASAN_LABELS / BASALT_TSAN_LABELS, default 'unit|integration', =unit leaves the
# integration tests out: each takes its own throwaway cluster). They are time-boxed
# (BASALT_SANITIZERS_TIMEOUT seconds, killed after; by default what is left of
# BASALT_RUN_BUDGET, 2640 s from the start of this script, at least 600 s, so that a cold run
# ends within CI's 45 minutes), waited for after ctest, and
# stopped on any exit. A failing test, a sanitizer report or a fuzzer crash fails the run; so
# does a time box that ends while tests or fuzzers run. A time box that ends during a sanitizer
# *build* (a cold ccache: the first run on a machine) is reported and does not fail the run:
# what was compiled stays in ccache and the next run continues from there.
# BASALT_SANITIZERS=1 runs them with ctest arguments too. The last lines are the sanitizers'
# summary and ctest's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T0=$SECONDS
TEST_CLUSTER=$REPO_ROOT/_output/test-cluster
mkdir -p "$REPO_ROOT/_output"

SAN_PID="" SAN_LOG=$REPO_ROOT/_output/sanitizers.log
# The sanitizer stages run under timeout(1), which leads its own process group: signalling the
# group stops the script, its builds, ctest and fuzzers; its EXIT trap stops its test clusters
# (and down.sh below does it again in case it was killed first).
stop_sanitizers() {
  [[ -n $SAN_PID ]] || return 0
  kill -TERM -- "-$SAN_PID" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$SAN_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$SAN_PID" 2>/dev/null || true
  wait "$SAN_PID" 2>/dev/null || true
  SAN_PID=""
  local d
  for d in "$REPO_ROOT/_output/test-cluster-asan" "$REPO_ROOT/_output/test-cluster-tsan"; do
    [[ -d $d ]] && "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "$d" --quiet || true
  done
}
teardown() {
  stop_sanitizers
  local d
  for d in "$TEST_CLUSTER" "$TEST_CLUSTER-b"; do
    [[ -d $d ]] && "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "$d" --quiet || true
  done
}
trap teardown EXIT

SANITIZERS=${BASALT_SANITIZERS:-}
if [[ -z $SANITIZERS ]]; then
  SANITIZERS=1
  (($# == 0)) || SANITIZERS=0 # a subset of the tests: not the sanitizer stages, unless asked
fi
[[ $SANITIZERS == [01] ]] || { hlog "BASALT_SANITIZERS must be 0 or 1, got '$SANITIZERS'"; exit 2; }
FUZZ_TIME=${BASALT_FUZZ_TIME:-20}
SAN_TIMEOUT=${BASALT_SANITIZERS_TIMEOUT:-}
RUN_BUDGET=${BASALT_RUN_BUDGET:-2640}
SAN_STAGES=${BASALT_SANITIZER_STAGES:-asan,fuzz,tsan}
ASAN_LABELS=${BASALT_ASAN_LABELS:-unit|integration}
TSAN_LABELS=${BASALT_TSAN_LABELS:-unit|integration}

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

if ((SANITIZERS)); then
  if [[ -z $SAN_TIMEOUT ]]; then
    # What the run budget leaves after the build: a cold build shortens the box (and a box that
    # ends during a sanitizer build is reported, not failed), a warm one leaves the whole of it.
    SAN_TIMEOUT=$((RUN_BUDGET - (SECONDS - T0)))
    ((SAN_TIMEOUT >= 600)) || SAN_TIMEOUT=600
  fi
  hlog "sanitizer stages $SAN_STAGES in the background (ASan labels '$ASAN_LABELS', TSan labels '$TSAN_LABELS', ${FUZZ_TIME}s per fuzzer, at most ${SAN_TIMEOUT}s; log: _output/sanitizers.log; BASALT_SANITIZERS=0 skips them)"
  rm -f "$REPO_ROOT/_output/sanitizers.stage"
  t_san=$SECONDS
  # Niced below the suites (which have timing bounds, e.g. the HA take-over): the builds run at
  # nice 19, the sanitizer tests and fuzzers at 15, on the cores the suites leave idle.
  nice -n 10 timeout --kill-after=30 "$SAN_TIMEOUT" "$HACK_DIR/test-sanitizers.sh" --fuzz-time "$FUZZ_TIME" \
    --stages "$SAN_STAGES" --asan-labels "$ASAN_LABELS" --tsan-labels "$TSAN_LABELS" \
    </dev/null >"$SAN_LOG" 2>&1 &
  SAN_PID=$!
fi

t=$SECONDS
rc=0
# -j 4 on any machine: the e2e lanes (two shared clusters and one of suites with clusters of
# their own, see e2e/CMakeLists.txt) mostly wait on the API server; unit tests fill the rest.
ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 900 -j "$(($(nproc) > 4 ? $(nproc) : 4))" "$@" || rc=$?
hlog "tests: $((SECONDS - t))s"
if ((rc != 0)); then
  hlog "logs of the test cluster: $TEST_CLUSTER/logs/"
fi

if [[ -n $SAN_PID ]]; then
  t=$SECONDS
  hlog "waiting for the sanitizer and fuzz stages"
  san_rc=0
  wait "$SAN_PID" || san_rc=$?
  SAN_PID=""
  # The stage lines of test-sanitizers.sh's summary (or its last lines when it did not get there).
  summary=$(sed -n '/\[test-sanitizers\] summary/,$p' "$SAN_LOG")
  before_summary() { sed '/\[test-sanitizers\] summary/,$d' "$SAN_LOG"; }
  if ((san_rc == 0)); then
    verdict="ok"
  elif ((san_rc == 124 || san_rc == 137)) &&
    [[ $(cat "$REPO_ROOT/_output/sanitizers.stage" 2>/dev/null) == *-build ]]; then
    stage=$(cat "$REPO_ROOT/_output/sanitizers.stage")
    verdict="NOT RUN: the $stage stage did not finish within ${SAN_TIMEOUT}s (a cold ccache; what it compiled is cached and the next run continues; BASALT_SANITIZERS_TIMEOUT)"
    san_rc=0
  elif ((san_rc == 124 || san_rc == 137)) &&
    (($(cat "$REPO_ROOT/_output/sanitizers.build-seconds" 2>/dev/null || echo 0) * 2 >= SAN_TIMEOUT)); then
    # A cold sanitizer build took half the box or more, and its tests or fuzzers then ran out of
    # time: a first run on a machine, not a hang (ctest and the fuzzers time out each test
    # themselves). The next run's build is warm, and a time-out there fails.
    verdict="NOT RUN to the end: the sanitizer builds took $(cat "$REPO_ROOT/_output/sanitizers.build-seconds")s of the ${SAN_TIMEOUT}s box (a cold ccache) and stage $(cat "$REPO_ROOT/_output/sanitizers.stage" 2>/dev/null || echo '?') was stopped; the next run continues warm (BASALT_SANITIZERS_TIMEOUT)"
    san_rc=0
  elif ((san_rc == 124 || san_rc == 137)); then
    verdict="FAILED: timed out after ${SAN_TIMEOUT}s in stage $(cat "$REPO_ROOT/_output/sanitizers.stage" 2>/dev/null || echo '?') (BASALT_SANITIZERS_TIMEOUT)"
  else
    verdict="FAILED (exit $san_rc)"
    # The reports test-sanitizers.sh printed (failing tests, sanitizer reports, crashes).
    before_summary | grep -E -A30 'failed|FAILED|CRASHED|ERROR: |runtime error:|WARNING: ThreadSanitizer' |
      head -n 120 >&2 || true
  fi
  [[ -n $summary ]] || summary=$(tail -n 15 "$SAN_LOG")
  echo "$summary" >&2
  hlog "sanitizers: $verdict, $((SECONDS - t_san))s in all, ${FUZZ_TIME}s per fuzzer, waited $((SECONDS - t))s after ctest (log: _output/sanitizers.log)"
  ((san_rc == 0)) || rc=1
fi
# Last, so that the end of a CI log (often all that is shown of it) says why: each failed test's
# failure lines from ctest's log.
failed_log="$BUILD_DIR/Testing/Temporary/LastTestsFailed.log"
if [[ -s $failed_log ]] && ((rc != 0)); then
  hlog "why the failed tests failed (their FAIL lines; whole output: $BUILD_DIR/Testing/Temporary/LastTest.log):"
  while IFS= read -r line; do
    name=${line#*:}
    awk -v name="$name" '
      { t = "Testing: " name }
      !on && length($0) >= length(t) && substr($0, length($0) - length(t) + 1) == t { on = 1; next }
      on && index($0, "\"" name "\" end time") { exit }
      on && /FAIL|not ok|timed out|Timeout|ERROR|Error:/ { print "  " name ": " substr($0, 1, 400); if (++n == 12) exit }
    ' "$BUILD_DIR/Testing/Temporary/LastTest.log" >&2 || true
  done <"$failed_log"
fi
hlog "total: $((SECONDS - T0))s"
exit "$rc"
