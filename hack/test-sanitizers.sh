#!/usr/bin/env bash
# Builds Basalt's sanitizer trees with Clang and runs the tests and fuzzers under them:
#   asan  _output/build-asan: ASan + UBSan + libFuzzer coverage (BASALT_FUZZ=ON) on every
#         target; runs the unit and integration tests (the integration tests against their own
#         throwaway cluster in _output/test-cluster-asan)
#   fuzz  each fuzz/ target of that tree, time-boxed, on its committed corpus (fuzz/corpus/<name>)
#         plus the inputs it found in earlier runs (_output/fuzz/<name>/corpus)
#   tsan  _output/build-tsan: TSan; builds the test binaries of --tsan-targets (the code that runs
#         threads: client, informers, work queues, leader election, events, runtime, the
#         scheduler cache and its writers, the webhook server, the job controller) and runs
#         their tests of --tsan-labels; --tsan-targets all builds and runs everything
# The fuzzers share the ASan tree: one Clang build serves the tests and the fuzzers (a separate
# fuzz tree would double the cold build for nothing; the coverage instrumentation costs the
# tests little). Stages run one after the other, each build niced, so at most one sanitizer
# build competes for the cores. ccache makes a warm rebuild cheap.
#
# Exits non-zero on any build failure, test failure, sanitizer report or fuzzer crash; a crash
# prints the reproducer's path and the command that replays it. Ends with one line per stage.
#
#   hack/test-sanitizers.sh [flags] [-- extra ctest args]
#     --stages LIST        comma-separated subset of asan,fuzz,tsan (default: all three)
#     --fuzz-time SECONDS  per fuzzer (default 30; 0 = only replay the corpora)
#     --asan-labels REGEX  ctest -L for the ASan tree (default: unit|integration)
#     --tsan-labels REGEX  ctest -L for the TSan tree (default: unit)
#     --tsan-targets LIST  comma-separated test binaries for the TSan tree, or 'all'
#                          (default: the threaded ones, see TSAN_TARGETS below)
#     -j N                 build and ctest parallelism (default: nproc)
#
# Meant to run beside or after hack/test.sh: it uses separate build trees and test-cluster
# state dirs, and the cached control-plane binaries (it runs e2e/cluster/build.sh, a no-op
# once they are built; run it only after test.sh has built them, or serially).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STAGES=asan,fuzz,tsan FUZZ_TIME=30 ASAN_LABELS='unit|integration' TSAN_LABELS=unit
# The test binaries whose code runs threads (a data race can only be where threads are): a
# TSan build of these and what they link is about half of a whole tree, so it fits CI's time box.
TSAN_TARGETS=client_test,informer_test,ctrlkit_test,event_recorder_test,leader_election_test
TSAN_TARGETS+=,default_queue_test,runtime_test,sched_cache_test,webhook_server_test
TSAN_TARGETS+=,controllers_job_controller_test
# ... and, when --tsan-labels takes the integration tests, their threaded binaries.
TSAN_INTEGRATION_TARGETS=client_integration_test,informer_integration_test,ctrlkit_integration_test
TSAN_TARGETS_SET=""
JOBS=$(nproc)
CTEST_EXTRA=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --stages) STAGES=$2; shift 2 ;;
    --fuzz-time) FUZZ_TIME=$2; shift 2 ;;
    --asan-labels) ASAN_LABELS=$2; shift 2 ;;
    --tsan-labels) TSAN_LABELS=$2; shift 2 ;;
    --tsan-targets) TSAN_TARGETS=$2; TSAN_TARGETS_SET=1; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    --) shift; CTEST_EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-sanitizers: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $FUZZ_TIME =~ ^[0-9]+$ ]] || { echo "test-sanitizers: --fuzz-time must be seconds" >&2; exit 2; }
for s in ${STAGES//,/ }; do
  case $s in asan|fuzz|tsan) ;; *) echo "test-sanitizers: unknown stage '$s'" >&2; exit 2 ;; esac
done
want() { [[ ,$STAGES, == *,$1,* ]]; }
[[ -z $TSAN_TARGETS_SET && $TSAN_LABELS == *integration* ]] && TSAN_TARGETS+=,$TSAN_INTEGRATION_TARGETS

OUT=$REPO_ROOT/_output
mkdir -p "$OUT"
T0=$SECONDS
SUMMARY=()
FAILED=0

teardown() {
  for d in "$OUT/test-cluster-asan" "$OUT/test-cluster-tsan"; do
    [[ -d $d ]] && "$REPO_ROOT/e2e/cluster/down.sh" --state-dir "$d" --quiet || true
  done
}
trap teardown EXIT

"$HACK_DIR/install-deps.sh"
if ! command -v clang++ >/dev/null; then
  hlog "clang++ not found (hack/install-deps.sh installs clang and libclang-rt-14-dev)"
  exit 1
fi

# configure_and_build <tree> <log> <target[,target...]|all> <cmake args...>
configure_and_build() {
  local tree=$1 log=$2 targets
  IFS=, read -ra targets <<<"$3"
  shift 3
  : >"$log"
  if [[ ! -f $tree/build.ninja ]]; then
    cmake -S "$REPO_ROOT" -B "$tree" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DBASALT_BUILD_BENCH=OFF "$@" \
      >>"$log" 2>&1 || { tail -n 40 "$log" >&2; hlog "cmake configure of $tree failed (log: $log)"; return 1; }
  fi
  nice -n 10 cmake --build "$tree" -j "$JOBS" --target "${targets[@]}" >>"$log" 2>&1 || {
    grep -E -A12 '^FAILED:' "$log" | head -n 80 >&2
    hlog "build of $tree failed (log: $log)"
    return 1
  }
}

# run_ctest <tree> <labels> <log> [ctest args...]: integration tests get their fixture
# cluster from ctest.
run_ctest() {
  local tree=$1 labels=$2 log=$3 rc=0
  shift 3
  if [[ $labels == *integration* ]]; then
    "$REPO_ROOT/e2e/cluster/build.sh"
    ensure_kubectl
  fi
  # --no-tests=error: a selection that matches nothing is a failure, not a pass.
  nice -n 5 ctest --test-dir "$tree" -L "$labels" --output-on-failure --timeout 900 -j "$JOBS" \
    --no-tests=error "$@" "${CTEST_EXTRA[@]}" >"$log" 2>&1 || rc=$?
  tail -n 3 "$log" >&2
  if ((rc != 0)); then
    # The failing tests' output, with the sanitizer reports (ctest --output-on-failure).
    grep -E -B2 -A40 'ERROR: (Address|Leak)Sanitizer|runtime error:|WARNING: ThreadSanitizer|\*\*\*Failed|Failed +[0-9.]+ sec' \
      "$log" | head -n 200 >&2 || true
    hlog "tests failed in $tree (full log: $log)"
  fi
  return "$rc"
}

# The stage running now, for hack/test.sh: a time box that ends during a build is not a
# failure of the code (the objects built so far stay in ccache for the next run).
# The builds' seconds so far are kept too: a time box that a cold build used up before the tests
# could finish is not a failure either (see hack/test.sh).
stage_begin() { echo "$1" >"$OUT/sanitizers.stage"; }
BUILD_SECONDS=0
echo 0 >"$OUT/sanitizers.build-seconds"
stage_done() {  # stage_done <name> <start> <rc> <what>
  local verdict=ok
  (($3 == 0)) || { verdict=FAILED; FAILED=1; }
  if [[ $1 == *-build ]]; then
    BUILD_SECONDS=$((BUILD_SECONDS + SECONDS - $2))
    echo "$BUILD_SECONDS" >"$OUT/sanitizers.build-seconds"
  fi
  SUMMARY+=("$(printf '%-5s %-6s %4ds  %s' "$1" "$verdict" $((SECONDS - $2)) "$4")")
}

ASAN_TREE=$OUT/build-asan
if want asan || want fuzz; then
  t=$SECONDS
  # Only the fuzzers (and what they link) when the tests are not wanted.
  target=all
  want asan || target=fuzzers
  stage_begin asan-build
  hlog "building the ASan+UBSan+fuzzer tree into $ASAN_TREE (target $target)"
  rc=0
  configure_and_build "$ASAN_TREE" "$OUT/build-asan.log" "$target" -DBASALT_FUZZ=ON \
    -DBASALT_TEST_CLUSTER_DIR="$OUT/test-cluster-asan" || rc=$?
  stage_done asan-build "$t" "$rc" "_output/build-asan.log"
  if ((rc != 0)); then
    printf '%s\n' "${SUMMARY[@]}" >&2
    exit 1
  fi
fi

if want asan; then
  t=$SECONDS
  stage_begin asan
  hlog "ASan+UBSan: ctest -L '$ASAN_LABELS'"
  rc=0
  run_ctest "$ASAN_TREE" "$ASAN_LABELS" "$OUT/test-asan.log" || rc=$?
  stage_done asan "$t" "$rc" "ctest -L '$ASAN_LABELS' (_output/test-asan.log)"
fi

if want fuzz; then
  t=$SECONDS
  stage_begin fuzz
  frc=0
  crashed=()
  for bin in "$ASAN_TREE"/fuzz/fuzz_*; do
    [[ -x $bin ]] || continue
    name=$(basename "$bin")
    name=${name#fuzz_}
    work=$OUT/fuzz/$name
    mkdir -p "$work/corpus" "$work/artifacts"
    args=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/")
    # 0 s: replay the corpora only (libFuzzer's -max_total_time=0 would mean "no limit").
    if ((FUZZ_TIME > 0)); then args+=(-max_total_time="$FUZZ_TIME"); else args+=(-runs=0); fi
    [[ -f $REPO_ROOT/fuzz/dicts/$name.dict ]] && args+=(-dict="$REPO_ROOT/fuzz/dicts/$name.dict")
    hlog "fuzz_$name: ${FUZZ_TIME}s on fuzz/corpus/$name + _output/fuzz/$name/corpus"
    rc=0
    (cd "$work" && nice -n 5 "$bin" "${args[@]}" "$work/corpus" "$REPO_ROOT/fuzz/corpus/$name") \
      >"$work/log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1 || true)
    cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 || true)
    if ((rc != 0)); then
      frc=1
      artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/log" | tail -n 1)
      grep -E -m1 -A14 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|FUZZ_CHECK' \
        "$work/log" | head -n 60 >&2 || tail -n 40 "$work/log" >&2
      hlog "fuzz_$name CRASHED (exit $rc); reproducer: ${artifact:-none written, see $work/log}"
      [[ -n $artifact ]] && hlog "  replay: $bin $artifact"
      crashed+=("$name")
    else
      hlog "fuzz_$name: ok (${execs:-?} runs, ${cov:-cov: ?})"
    fi
  done
  what="${FUZZ_TIME}s each"
  ((${#crashed[@]} == 0)) || what+="; crashed: ${crashed[*]}"
  stage_done fuzz "$t" "$frc" "$what"
fi

if want tsan; then
  TSAN_TREE=$OUT/build-tsan
  t=$SECONDS
  stage_begin tsan-build
  tsan_select=()
  if [[ $TSAN_TARGETS != all ]]; then
    # The tests of those binaries only (their names are "<binary>:<test case>").
    tsan_select=(-R "^(${TSAN_TARGETS//,/|}):")
  fi
  hlog "building the TSan tree into $TSAN_TREE (targets: $TSAN_TARGETS)"
  rc=0
  configure_and_build "$TSAN_TREE" "$OUT/build-tsan.log" "$TSAN_TARGETS" -DBASALT_TSAN=ON \
    -DBASALT_TEST_CLUSTER_DIR="$OUT/test-cluster-tsan" || rc=$?
  stage_done tsan-build "$t" "$rc" "_output/build-tsan.log"
  if ((rc == 0)); then
    t=$SECONDS
    stage_begin tsan
    hlog "TSan: ctest -L '$TSAN_LABELS' ${tsan_select[*]}"
    run_ctest "$TSAN_TREE" "$TSAN_LABELS" "$OUT/test-tsan.log" "${tsan_select[@]}" || rc=$?
    stage_done tsan "$t" "$rc" "ctest -L '$TSAN_LABELS' ${tsan_select[*]} (_output/test-tsan.log)"
  fi
fi

stage_begin done
hlog "summary (total $((SECONDS - T0))s):"
printf '  %s\n' "${SUMMARY[@]}" >&2
exit "$FAILED"
