#!/usr/bin/env bash
# cohort-allreduce-bench: one correct row per size for the local kvstore and, under mpirun, for
# the mpi kvstore; the bus bandwidth formula; exit code 2 for bad arguments and for ranks whose
# kvstore settings differ; bench/mpi_allreduce_peer's paired mode (MPI_Allreduce and the mpi
# kvstore in turn in the same processes, scripts/bench-allreduce.sh's rounds): both tables,
# every sum right.
#   cohort_allreduce_bench_test.sh BENCH MPIEXEC PEER
set -u
bin=$1 mpiexec=$2 peer=$3
fail=0
check() {  # check NAME ROWS OUTPUT: ROWS data rows, none wrong, busbw = algbw * 2(n-1)/n
  local name=$1 rows=$2 out=$3 n=$4
  local got
  got=$(grep -vc '^#' <<<"$out")
  if [[ $got -ne $rows ]]; then
    echo "FAIL: $name: $got rows, want $rows"; echo "$out"; fail=1; return
  fi
  if ! awk -v n="$n" '!/^#/ { if ($7 != 0) exit 1; want = $5 * 2 * (n - 1) / n;
       if (want - $6 > 0.002 || $6 - want > 0.002) exit 1 }' <<<"$out"; then
    echo "FAIL: $name: wrong elements or busbw != algbw*2(n-1)/n"; echo "$out"; fail=1; return
  fi
  grep -q '^# wrong elements in all: 0$' <<<"$out" || { echo "FAIL: $name: summary"; fail=1; return; }
  echo "ok: $name"
}
out=$("$bin" --kvstore local --devices cpu:0,cpu:1,cpu:2 --min-bytes 4K --max-bytes 64K --iters 3)
[[ $? -eq 0 ]] || { echo "FAIL: local exit code"; fail=1; }
check "local, 3 devices" 5 "$out" 3
if "$mpiexec" --version >/dev/null 2>&1; then
  out=$("$mpiexec" -np 2 --allow-run-as-root --oversubscribe --bind-to none \
    "$bin" --kvstore mpi --devices cpu:0,cpu:1 --min-bytes 1K --max-bytes 1M --factor 4 --iters 3)
  [[ $? -eq 0 ]] || { echo "FAIL: mpi exit code"; fail=1; }
  check "mpi, 2 workers x 2 devices" 6 "$out" 4
  # Ranks that would sum a bucket in different ways (here the ring over TCP and over MPI) are
  # refused at once, naming the setting, instead of hanging at the first reduction.
  # (Different buckets or overlap order summed unrelated gradients without a word.)
  one=("$bin" --kvstore mpi --devices cpu:0 --min-bytes 1K --max-bytes 4K --iters 1)
  for setting in COHORT_RING_TRANSPORT=tcp,mpi COHORT_KVSTORE_BUCKET_MB=1,4 \
                 COHORT_KVSTORE_OVERLAP=1,0 COHORT_RING_CHUNK_KB=64,128 \
                 COHORT_RING_MIN_KB=0,8192 COHORT_RING_MIN_KB=64,8192; do
    name=${setting%%=*} values=${setting#*=}
    err=$(timeout 30 "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none \
      -np 1 -x "$name=${values%,*}" "${one[@]}" : -np 1 -x "$name=${values#*,}" "${one[@]}" 2>&1)
    code=$?
    if [[ $code -eq 2 ]] && grep -q "$name differs between the ranks" <<<"$err"; then
      echo "ok: ranks with different $name -> exit 2"
    else
      echo "FAIL: ranks with different $name -> exit $code: $err"; fail=1
    fi
  done
  # What counts is the threshold in effect: unset is 8192 KB over MPI messages.
  err=$(COHORT_RING_TRANSPORT=mpi timeout 30 "$mpiexec" --allow-run-as-root --oversubscribe \
    --bind-to none -x COHORT_RING_TRANSPORT -np 1 -x COHORT_RING_MIN_KB=8192 "${one[@]}" : \
    -np 1 "${one[@]}" 2>&1)
  code=$?
  if [[ $code -eq 0 ]]; then
    echo "ok: COHORT_RING_MIN_KB 8192 on one rank and unset on the other agree over MPI messages"
  else
    echo "FAIL: COHORT_RING_MIN_KB 8192 and unset -> exit $code: $err"; fail=1
  fi
  out=$(timeout 30 "$mpiexec" -np 2 --allow-run-as-root --oversubscribe --bind-to none \
    "$peer" 65536 1048576 3 paired 2>/dev/null)
  code=$?
  mpi_rows=$(awk '/^# kvstore/ { exit } !/^#/ && $7 == 0' <<<"$out" | wc -l)
  kv_rows=$(awk '/^# kvstore/ { k = 1 } k && !/^#/ && $7 == 0' <<<"$out" | wc -l)
  if [[ $code -eq 0 && $mpi_rows -eq 5 && $kv_rows -eq 5 ]]; then
    echo "ok: paired MPI_Allreduce and kvstore, 5 right rows each"
  else
    echo "FAIL: paired peer: exit $code, $mpi_rows MPI and $kv_rows kvstore rows right (want 5, 5)"
    echo "$out"; fail=1
  fi
else  # scripts/gpu-check.sh builds without an mpirun (MPIEXEC_EXECUTABLE=/bin/false)
  echo "skip: mpi part, no usable mpiexec ($mpiexec)"
fi
for args in "--min-bytes 4X" "--min-bytes 1M --max-bytes 4K" "--kvstore bogus" "--factor 1" \
            "--factor nan" "--min-bytes 8589934592G --max-bytes 8589934592G" \
            "--min-bytes 9223372036854775807" "--kvstore nccl --devices cpu:0" "--devices cpu:0-100000"; do
  # shellcheck disable=SC2086  # args is a list of flags
  err=$("$bin" $args 2>&1 >/dev/null)
  code=$?
  if [[ $code -ne 2 || $(wc -l <<<"$err") -ne 1 ]]; then
    echo "FAIL: '$args' -> exit $code (want 2, one line): $err"; fail=1
  else
    echo "ok: '$args' -> $err"
  fi
done
exit $fail
