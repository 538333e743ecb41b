#!/usr/bin/env bash
# A/B of webhook_handler_bench: runs two builds' bench binaries in turns (A B A B ...) so both
# see the same machine load, and prints each build's median ns per call and the ratio B/A for
# the PodGroup, Job and Queue validators. Figures, not pass/fail.
#
# Usage: bench/webhook/ab.sh BENCH_A BENCH_B [pairs] [iterations-per-round] [rounds]
#   BENCH_A, BENCH_B  webhook_handler_bench binaries (e.g. a build of the reference commit
#                     with this bench source copied in, and the current build)
#   pairs             A/B turns (default 9); each run prints the best of `rounds` rounds
set -euo pipefail
A=$1 B=$2 PAIRS=${3:-9} ITER=${4:-2000} ROUNDS=${5:-30}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 0; i < PAIRS; i++)); do
  echo "A $("$A" --iterations="$ITER" --rounds="$ROUNDS")" >>"$out"
  echo "B $("$B" --iterations="$ITER" --rounds="$ROUNDS")" >>"$out"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { grep "^$1 " "$out" | sed -nE "s/.* $2=([0-9]+).*/\1/p" | median; }
echo "pairs=$PAIRS iterations=$ITER rounds=$ROUNDS load average $(cut -d' ' -f1-3 /proc/loadavg)"
for f in podgroup_create_ns job_create_ns queue_create_ns; do
  a=$(field A "$f") b=$(field B "$f")
  awk -v f="$f" -v a="$a" -v b="$b" 'BEGIN { printf "%-18s A=%6d B=%6d ratio B/A=%.3f\n", f, a, b, b / a }'
done
