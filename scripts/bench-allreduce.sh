#!/usr/bin/env bash
# The mpi kvstore against raw MPI_Allreduce, side by side in one run on this host: for each size
# one JSON line with both bus bandwidths and their ratio (kvstore / raw MPI).
#   scripts/bench-allreduce.sh [NP] [MIN_BYTES] [MAX_BYTES] [ITERS]   (defaults: 2 64K 64M 20)
# Both run with one device per worker, Open MPI's shared-memory transport (vader) between ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2} min=${2:-65536} max=${3:-67108864} iters=${4:-20}
mpi=(mpirun -np "$np" --bind-to none --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${mpi[@]}" build/bench/mpi_allreduce_peer "$min" "$max" "$iters" > "$tmp/raw"
"${mpi[@]}" build/apps/cohort-allreduce-bench --kvstore mpi --devices cpu:0 \
  --min-bytes "$min" --max-bytes "$max" --iters "$iters" > "$tmp/kv"
awk -v np="$np" '
  FNR == NR { if ($1 !~ /^#/) raw[$1] = $6; next }
  $1 !~ /^#/ && ($1 in raw) {
    printf "{\"ranks\":%d,\"bytes\":%d,\"kvstore_busbw_gbs\":%s,\"mpi_busbw_gbs\":%s,\"ratio\":%.2f}\n",
           np, $1, $6, raw[$1], $6 / raw[$1]
  }' "$tmp/raw" "$tmp/kv"
