#!/usr/bin/env bash
# The mpi kvstore against raw MPI_Allreduce, side by side on this host: REPS rounds, each timing
# both; for each size one JSON line with the median bus bandwidths, the median of the rounds'
# ratios (kvstore / raw MPI) and the lowest.
#   scripts/bench-allreduce.sh [NP] [MIN_BYTES] [MAX_BYTES] [ITERS] [REPS]
#   (defaults: 2 64K 64M 50 3; extra arguments of cohort-allreduce-bench in KVSTORE_ARGS, such
#   as --out-of-place, and of mpirun in MPIRUN_ARGS, such as --host A,B)
# A round times the two in the same processes, a reduction of each at every iteration, each first
# every other time (mpi_allreduce_peer's "paired" mode): on a loaded host the scheduler places a
# launch's ranks for its whole life, well or badly, so separate launches compared placements as
# much as reductions. PAIRED=0 (and KVSTORE_ARGS or COMPRESSION, which paired mode does not
# take) launches the peer, then cohort-allreduce-bench, in each round instead.
# A time is the median of ITERS: with one busy program beside 2 ranks on 2 cores, about a third
# of the 8 MB reductions of either lose a scheduler slice (1.3 ms become 5.3), and a median of 20
# such times falls on the slow side in some rounds and not in others (Note [Waiting in the
# shared-memory ring]); 50 keeps it on the side where most of them are.
# COMPRESSION=bfloat16 (or float16) also runs the kvstore with --gradient-compression in each
# round and adds its bus bandwidth (counted in float32 bytes) and the median of the rounds'
# ratios compressed / uncompressed (Note [Gradient compression]).
# MPI_CONTROL=1 also runs the MPI peer alone in each round and adds mpi_self_ratio_min, the
# worst round of raw MPI against itself: the noise floor under which ratio_min says nothing
# about the kvstore, and ratio_min_over_mpi_self, the kvstore's worst round against that floor.
# Both run with one device per worker, Open MPI's shared-memory transport (vader) between ranks
# unless OMPI_MCA_btl says otherwise, and time each reduction alone after a barrier. With
# NETNS_HOSTS=1 each rank runs on a host of its own made of a network namespace
# (scripts/netns-hosts.sh, root), TCP between them; RANKS_PER_HOST=K puts K ranks on each host
# (the kvstore then sums inside hosts first: Note [Hierarchical all-reduce]).
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2} iters=${4:-50} reps=${5:-3}
# Sizes as bytes for both programs (the peer reads whole numbers only): 64K, 64M, 1G or bytes.
min=$(numfmt --from=iec "${2:-64K}") max=$(numfmt --from=iec "${3:-64M}")
tmp=$(mktemp -d)
if [[ ${NETNS_HOSTS:-0} == 1 ]]; then
  per_host=${RANKS_PER_HOST:-1}  # NP / RANKS_PER_HOST hosts
  if ((per_host < 1 || np % per_host != 0)); then
    echo "bench-allreduce.sh: RANKS_PER_HOST=$per_host does not divide $np ranks" >&2
    exit 2
  fi
  hosts=$((np / per_host))
  scripts/netns-hosts.sh up "$hosts" >&2
  trap 'rm -rf "$tmp"; scripts/netns-hosts.sh down' EXIT
  mpi=(scripts/netns-hosts.sh mpirun -np "$np"
       --host "$(seq -s, -f "10.213.0.%g:$per_host" 11 $((10 + hosts)))" --bind-to none)
else
  trap 'rm -rf "$tmp"' EXIT
  mpi=(mpirun -np "$np" --bind-to none --oversubscribe)
  [[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
  export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
fi
[[ -n ${MPIRUN_ARGS:-} ]] && read -ra extra <<< "$MPIRUN_ARGS" && mpi+=("${extra[@]}")
read -ra kv_args <<< "${KVSTORE_ARGS:-}"
paired=${PAIRED:-1}
if [[ -n ${KVSTORE_ARGS:-} || -n ${COMPRESSION:-} ]]; then
  if [[ ${PAIRED:-} == 1 ]]; then
    echo "bench-allreduce.sh: paired rounds run the kvstore in place, uncompressed: PAIRED=1" \
         "does not take KVSTORE_ARGS or COMPRESSION" >&2
    exit 2
  fi
  paired=0
fi
for ((r = 0; r < reps; ++r)); do
  if [[ $paired == 1 ]]; then
    "${mpi[@]}" build/bench/mpi_allreduce_peer "$min" "$max" "$iters" paired > "$tmp/both$r"
    awk -v raw="$tmp/raw$r" -v kv="$tmp/kv$r" '/^# kvstore/ { k = 1 } { print > (k ? kv : raw) }' \
      "$tmp/both$r"
  else
    "${mpi[@]}" build/bench/mpi_allreduce_peer "$min" "$max" "$iters" > "$tmp/raw$r"
    "${mpi[@]}" build/apps/cohort-allreduce-bench --kvstore mpi --devices cpu:0 \
      --min-bytes "$min" --max-bytes "$max" --iters "$iters" "${kv_args[@]}" > "$tmp/kv$r"
  fi
  if [[ ${MPI_CONTROL:-0} == 1 ]]; then
    "${mpi[@]}" build/bench/mpi_allreduce_peer "$min" "$max" "$iters" > "$tmp/again$r"
  else
    cp "$tmp/raw$r" "$tmp/again$r"
  fi
  if [[ -n ${COMPRESSION:-} ]]; then
    "${mpi[@]}" build/apps/cohort-allreduce-bench --kvstore mpi --devices cpu:0 \
      --min-bytes "$min" --max-bytes "$max" --iters "$iters" "${kv_args[@]}" \
      --gradient-compression "$COMPRESSION" > "$tmp/cz$r"
  fi
done
if [[ -n ${COMPRESSION:-} ]]; then
  for ((r = 0; r < reps; ++r)); do
    awk 'FNR == NR { if ($1 !~ /^#/) kv[$1] = $6; next }
      $1 !~ /^#/ && ($1 in kv) { print $1, $6, kv[$1], $6 / kv[$1], $7 }' "$tmp/kv$r" "$tmp/cz$r"
  done | sort -k1,1n -k4,4g | awk -v np="$np" -v wire="$COMPRESSION" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function flush() {
      if (n == 0) return
      printf "{\"ranks\":%d,\"bytes\":%d,\"rounds\":%d,\"compression\":\"%s\",\"compressed_busbw_gbs\":%.3f,\"kvstore_busbw_gbs\":%.3f,\"compressed_ratio_median\":%.2f,\"wrong\":%d}\n",
             np, bytes, n, wire, median(cz, n), median(kv, n), median(ratio, n), wrong
      n = 0; wrong = 0
    }
    $1 != bytes { flush(); bytes = $1 }
    { ++n; cz[n] = $2; kv[n] = $3; ratio[n] = $4; wrong += $5 }
    END { flush() }'
fi
for ((r = 0; r < reps; ++r)); do
  awk -v r="$r" 'FILENAME == ARGV[1] { if ($1 !~ /^#/) raw[$1] = $6; next }
    FILENAME == ARGV[2] { if ($1 !~ /^#/) again[$1] = $6; next }
    $1 !~ /^#/ && ($1 in raw) { print $1, r, $6, raw[$1], $6 / raw[$1], again[$1] / raw[$1] }' \
    "$tmp/raw$r" "$tmp/again$r" "$tmp/kv$r"
done | sort -k1,1n -k5,5g > "$tmp/joined"
if [[ ! -s $tmp/joined ]]; then
  echo "bench-allreduce.sh: the peer and the kvstore measured no size in common between" \
       "$min and $max bytes" >&2
  exit 1
fi
awk -v np="$np" -v reps="$reps" -v control="${MPI_CONTROL:-0}" '
  function median(a, n,   i, j, t) {  # sorts a[1..n] (n is small)
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function flush() {
    if (n == 0) return
    printf "{\"ranks\":%d,\"bytes\":%d,\"rounds\":%d,\"kvstore_busbw_gbs\":%.3f,\"mpi_busbw_gbs\":%.3f,\"ratio_median\":%.2f,\"ratio_min\":%.2f",
           np, bytes, n, median(kv, n), median(raw, n), median(ratio, n), lowest
    if (control == 1) {
      printf ",\"mpi_self_ratio_min\":%.2f,\"ratio_min_over_mpi_self\":%.2f", lowest_self,
             lowest / lowest_self
    }
    printf "}\n"
    n = 0
  }
  $1 != bytes { flush(); bytes = $1; lowest = $5; lowest_self = $6 }
  { ++n; kv[n] = $3; raw[n] = $4; ratio[n] = $5; if ($5 < lowest) lowest = $5; if ($6 < lowest_self) lowest_self = $6 }
  END { flush() }' "$tmp/joined"
