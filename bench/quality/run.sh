#!/usr/bin/env bash
# Side-by-side placement quality (docs/quality.md): GPU allocation at 100% arrival on the openb
# trace, averaged over seeds, for each policy in bench/quality/conf/, with basalt-sim.
#
#   bench/quality/run.sh [--seeds N] [--variants "default gpushare40 ..."] [--out FILE.md]
#                        [--policies "fgd bestfit ..."] [--build-dir DIR] [--jobs J]
# Prints a Markdown table (and writes it to --out); per-run summaries go to _output/quality/.
# fgd measures fragmentation against the trace's whole pod list (basalt-sim's default, the
# paper's protocol); the policy "fgd-learned" runs conf/fgd.yaml with basalt-sim --fgd-learned
# (the distribution learned from the tasks seen so far).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seeds=10
variants="default gpushare40 multigpu20 gpuspec10 cpu050"
out=""
build="$root/_output/build"
jobs=1
policies="randomscore leastrequested binpack bestfit fgd"
while [[ $# -gt 0 ]]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
data=${BASALT_OPENB_DIR:-$root/../shared/data/alibaba-gpu-v2023}
[[ -d $data ]] || data=/work/shared/data/alibaba-gpu-v2023
sim=${BASALT_SIM:-$build/sim/basalt-sim}
[[ -x $sim ]] || { echo "run.sh: build basalt-sim first ($sim)" >&2; exit 2; }
logs="$root/_output/quality"
mkdir -p "$logs"

# One run per (variant, policy, seed), $jobs at a time.
cmds=()
for v in $variants; do
  for p in $policies; do
    conf=$p; extra=""
    if [[ $p == *-learned ]]; then conf=${p%-learned}; extra="--fgd-learned"; fi
    for s in $(seq 1 "$seeds"); do
      cmds+=("$sim --quiet --nodes $data/openb_node_list_gpu_node.csv --tasks $data/openb_pod_list_$v.csv --scheduler-conf $root/bench/quality/conf/$conf.yaml --seed $s $extra > $logs/$v.$p.$s.txt")
    done
  done
done
printf '%s\n' "${cmds[@]}" | xargs -P "$jobs" -I{} bash -c '{}'

# Published figures (FGD paper, openb default, 100% arrival) for reference.
declare -A published=([randomscore]="86.3" [bestfit]="92.9" [fgd]="95.2" [fgd-learned]="95.2" [binpack]="91.8 (GpuPacking)" [leastrequested]="-")
field() { grep -o "$1=[0-9.]*" "$2" | head -1 | cut -d= -f2; }
{
  echo "| variant | policy | GPU alloc at 100% arrival (mean of $seeds seeds) | min | max | partial-gang GPU-s | sim wall s (mean) | published (default) |"
  echo "|---|---|---|---|---|---|---|---|"
  for v in $variants; do
    for p in $policies; do
      vals=(); walls=(); partial=0
      for s in $(seq 1 "$seeds"); do
        f="$logs/$v.$p.$s.txt"
        vals+=("$(field gpu_alloc_at_100pct "$f")")
        walls+=("$(field wall_s "$f")")
        partial=$(awk -v a="$partial" -v b="$(field partial_gang_gpu_seconds "$f")" 'BEGIN{print a+b}')
      done
      stats=$(printf '%s\n' "${vals[@]}" | awk '{s+=$1; if(NR==1||$1<mn)mn=$1; if(NR==1||$1>mx)mx=$1} END{printf "%.2f%% | %.2f%% | %.2f%%", s/NR, mn, mx}')
      wall=$(printf '%s\n' "${walls[@]}" | awk '{s+=$1} END{printf "%.1f", s/NR}')
      pub="-"; [[ $v == default ]] && pub=${published[$p]}
      echo "| $v | $p | $stats | $partial | $wall | $pub |"
    done
  done
} | tee "${out:-/dev/null}"
