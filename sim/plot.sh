#!/usr/bin/env bash
# Plots a basalt-sim CSV (docs/sim.md) as PNGs with gnuplot:
#   sim/plot.sh OUT.csv [OUTDIR]   -> OUTDIR/allocation.png, OUTDIR/queues.png, OUTDIR/pending.png
# Several CSVs: sim/plot.sh a.csv b.csv ... -- OUTDIR  (allocation curves side by side).
# Installs Debian's gnuplot-nox with apt-get when gnuplot is missing.
set -euo pipefail
csvs=(); outdir=""
while [[ $# -gt 0 ]]; do
  if [[ $1 == -- ]]; then outdir=$2; break; fi
  csvs+=("$1"); shift
done
if [[ -z $outdir ]]; then
  if [[ ${#csvs[@]} -eq 2 && ! ${csvs[1]} == *.csv ]]; then outdir=${csvs[1]}; csvs=("${csvs[0]}"); fi
fi
[[ ${#csvs[@]} -ge 1 ]] || { echo "usage: sim/plot.sh OUT.csv [OUTDIR]" >&2; exit 2; }
outdir=${outdir:-$(dirname "${csvs[0]}")}
mkdir -p "$outdir"
if ! command -v gnuplot >/dev/null; then
  echo "plot.sh: installing gnuplot-nox" >&2
  sudo -n true 2>/dev/null && s=sudo || s=""
  $s apt-get install -y -q gnuplot-nox >/dev/null
fi
plots=""
for c in "${csvs[@]}"; do
  t=$(basename "$c" .csv)
  plots+="'$c' using 2:3 with lines lw 2 title '$t GPU', '$c' using 2:5 with lines dt 2 title '$t GPU fragmentation',"
done
gnuplot <<GP
set datafile separator ','
set terminal pngcairo size 900,560 noenhanced
set key top left
set grid
set output '$outdir/allocation.png'
set xlabel 'arrived GPU demand (% of capacity)'
set ylabel '% of GPU capacity'
plot ${plots%,}
GP
c=${csvs[0]}
header=$(head -1 "$c")
IFS=, read -ra cols <<<"$header"
qplots=""
for i in "${!cols[@]}"; do
  n=${cols[$i]}
  if [[ $n == share_* ]]; then
    q=${n#share_}
    qplots+="'$c' using 1:$((i + 1)) with lines lw 2 title '$q share', '$c' using 1:$((i + 2)) with lines dt 2 title '$q weight',"
  fi
done
gnuplot <<GP
set datafile separator ','
set terminal pngcairo size 900,560 noenhanced
set key top left
set grid
set output '$outdir/queues.png'
set xlabel 'virtual time (s)'
set ylabel '% of cluster GPU (CPU if no GPU)'
plot ${qplots%,}
set output '$outdir/pending.png'
set ylabel 'jobs / seconds'
plot '$c' using 1:6 with lines lw 2 title 'pending jobs', '$c' using 1:9 with lines title 'mean queueing delay (s)'
GP
echo "plot.sh: wrote $outdir/allocation.png $outdir/queues.png $outdir/pending.png"
