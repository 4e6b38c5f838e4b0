#!/usr/bin/env bash
# Training across hosts over TCP, on hosts made of network namespaces (scripts/netns-hosts.sh):
# 2 hosts equal one process with 2 devices bit for bit, 3 hosts one process with 3 devices within
# 1e-5 (also with buckets from 1 KB summed by the ring over TCP), and a rank killed on one host ends the whole job within 10 s. README's multi-host recipe
# is this test's. Exit 77 (CTest: skipped) where namespaces cannot be made.
#   multihost_test.sh TRAIN PARAMS SOURCE_DIR
set -u
train=$1 params=$2 src=$3
hosts=$src/scripts/netns-hosts.sh
export COHORT_NETNS_PREFIX="cohort-t$$-h"  # this run's own hosts: another run's stay untouched
if ! bash "$hosts" up 3; then
  echo "skipped: network namespaces cannot be made here (needs root and iproute2)"
  exit 77
fi
source "$(dirname "$0")/lib.sh"
trap 'bash "$hosts" down; rm -rf "$tmp"' EXIT
config=$src/configs/synthetic_mlp.yaml
common=(--config "$config" --set log_level=warn --set epochs=2)

"$train" "${common[@]}" --set devices=cpu:0,cpu:1 --set checkpoint.prefix="$tmp/one2" > /dev/null 2>&1
"$train" "${common[@]}" --set devices=cpu:0,cpu:1,cpu:2 --set checkpoint.prefix="$tmp/one3" \
  > /dev/null 2>&1
timeout 60 bash "$hosts" mpirun -np 2 --host 10.213.0.11,10.213.0.12 "$train" "${common[@]}" \
  --set devices=cpu:0 --set kvstore=mpi --set checkpoint.prefix="$tmp/two" > "$tmp/two.log" 2>&1
check "2 hosts train (exit $?)" '[[ -f $tmp/two-0002.params ]]' || tail -5 "$tmp/two.log"
check "2 hosts equal one process with 2 devices, bit for bit" \
  '"$params" diff "$tmp/one2-0002.params" "$tmp/two-0002.params" > "$tmp/diff2" 2>&1' || tail -3 "$tmp/diff2"
printf '10.213.0.%s slots=1\n' 11 12 13 > "$tmp/hostfile"  # README's recipe: a hostfile
timeout 60 bash "$hosts" mpirun -np 3 --hostfile "$tmp/hostfile" "$train" \
  "${common[@]}" --set devices=cpu:0 --set kvstore=mpi --set batch_size=129 --set checkpoint.prefix="$tmp/three" \
  > "$tmp/three.log" 2>&1
check "3 hosts train (exit $?)" '[[ -f $tmp/three-0002.params ]]' || tail -5 "$tmp/three.log"
"$train" "${common[@]}" --set devices=cpu:0,cpu:1,cpu:2 --set batch_size=129 \
  --set checkpoint.prefix="$tmp/one3" > /dev/null 2>&1
check "3 hosts equal one process with 3 devices within 1e-5" \
  '"$params" diff "$tmp/one3-0002.params" "$tmp/three-0002.params" --tol 1e-5 > "$tmp/diff3" 2>&1' ||
  tail -3 "$tmp/diff3"

# The same 3 hosts with buckets from 1 KB summed by the ring over TCP sockets (Note [TCP ring]).
timeout 60 bash "$hosts" mpirun -np 3 --hostfile "$tmp/hostfile" -x COHORT_RING_MIN_KB=1 "$train" \
  "${common[@]}" --set log_level=info --set devices=cpu:0 --set kvstore=mpi --set batch_size=129 \
  --set checkpoint.prefix="$tmp/tcp" > "$tmp/tcp.log" 2>&1
check "3 hosts train with the ring over TCP (exit $?)" \
  'grep -q "ring all-reduce over TCP between 3 ranks" "$tmp/tcp.log" && [[ -f $tmp/tcp-0002.params ]]' ||
  tail -5 "$tmp/tcp.log"
check "and equal one process with 3 devices within 1e-5" \
  '"$params" diff "$tmp/one3-0002.params" "$tmp/tcp-0002.params" --tol 1e-5 > "$tmp/difft" 2>&1' ||
  tail -3 "$tmp/difft"

# Two ranks on each of 2 hosts, reduced inside each host first (Note [Hierarchical all-reduce]),
# buckets from 1 KB in two levels of rings (shared memory inside, TCP across): the parameters of
# one process with 4 devices, within 1e-5.
"$train" "${common[@]}" --set devices=cpu:0,cpu:1,cpu:2,cpu:3 --set checkpoint.prefix="$tmp/one4" \
  > /dev/null 2>&1
timeout 60 bash "$hosts" mpirun -np 4 --host 10.213.0.11:2,10.213.0.12:2 \
  -x COHORT_KVSTORE_HIERARCHICAL=1 -x COHORT_RING_MIN_KB=1 "$train" "${common[@]}" \
  --set log_level=info --set devices=cpu:0 --set kvstore=mpi --set checkpoint.prefix="$tmp/hier" \
  > "$tmp/hier.log" 2>&1
check "2 hosts x 2 ranks train hierarchically, two levels of rings (exit $?)" \
  'grep -q "hierarchical all-reduce, 2 hosts of 2 ranks: reduce-scatter inside" "$tmp/hier.log" &&
   grep -q "ring inside each host between 2 ranks over shared memory, buffers from 1 KB" "$tmp/hier.log" &&
   grep -q "ring all-reduce over TCP between 2 ranks" "$tmp/hier.log" &&
   ! grep -q "inside the host runs over MPI" "$tmp/hier.log" && [[ -f $tmp/hier-0002.params ]]' ||
  tail -5 "$tmp/hier.log"
check "and equal one process with 4 devices within 1e-5" \
  '"$params" diff "$tmp/one4-0002.params" "$tmp/hier-0002.params" --tol 1e-5 > "$tmp/diff4" 2>&1' ||
  tail -3 "$tmp/diff4"

# A host whose shared memory cannot be set up (a file size limit: the segment cannot be
# reserved) sums inside over MPI messages, and every rank takes that host's threshold (1 KB
# here, so that the two levels run: over MPI messages inside that host).
timeout 60 bash "$hosts" mpirun -x COHORT_RING_MIN_KB=1 -np 2 --host 10.213.0.11:2 "$train" \
  "${common[@]}" --set log_level=info \
  --set devices=cpu:0 --set kvstore=mpi --set checkpoint.prefix="$tmp/noshm" : \
  -x COHORT_RING_MIN_KB=1 -np 2 --host 10.213.0.12:2 sh -c 'trap "" XFSZ; ulimit -f 1024; exec "$@"' \
  sh "$train" \
  "${common[@]}" --set devices=cpu:0 --set kvstore=mpi --set checkpoint.prefix="$tmp/noshm" \
  > "$tmp/noshm.log" 2>&1
check "a host without shared memory falls back to MPI messages (exit $?)" \
  'grep -q "ring inside each host between 2 ranks over MPI messages on at least one host, buffers from 1 KB" "$tmp/noshm.log" &&
   [[ -f $tmp/noshm-0002.params ]]' || tail -5 "$tmp/noshm.log"
check "and equals one process with 4 devices within 1e-5" \
  '"$params" diff "$tmp/one4-0002.params" "$tmp/noshm-0002.params" --tol 1e-5 > "$tmp/diffn" 2>&1' ||
  tail -3 "$tmp/diffn"
# TCP links that cannot connect (loopback named as the hosts' interface) fall back to MPI at
# once: the ranks learn that a connect failed instead of waiting out the setup's 20 s (which
# the deadline of 10 s would end with exit 124).
start=$(date +%s.%N)
timeout 60 bash "$hosts" mpirun -np 4 --host 10.213.0.11:2,10.213.0.12:2 -x COHORT_SOCKET_IFNAME=lo \
  -x COHORT_COMM_TIMEOUT=10 "$train" "${common[@]}" --set devices=cpu:0 --set kvstore=mpi \
  --set checkpoint.prefix="$tmp/refused" > "$tmp/refused.log" 2>&1
code=$? took=$(seconds_since "$start")
check "refused TCP links fall back to MPI at once (exit $code, $took s)" \
  '[[ $code -eq 0 && -f $tmp/refused-0002.params ]]' ||
  tail -5 "$tmp/refused.log"

# Hosts of unequal size (2 ranks and 1), hierarchical: a leader a host, the lone rank its own.
timeout 60 bash "$hosts" mpirun -np 3 --host 10.213.0.11:2,10.213.0.12:1 \
  -x COHORT_KVSTORE_HIERARCHICAL=1 "$train" "${common[@]}" --set log_level=info \
  --set devices=cpu:0 --set kvstore=mpi --set batch_size=129 --set checkpoint.prefix="$tmp/uneven" \
  > "$tmp/uneven.log" 2>&1
check "2 + 1 ranks on 2 hosts train hierarchically, a leader a host (exit $?)" \
  'grep -q "2 hosts of 1 to 2 ranks: reduce to a leader a host" "$tmp/uneven.log" && [[ -f $tmp/uneven-0002.params ]]' ||
  tail -5 "$tmp/uneven.log"
check "and equal one process with 3 devices within 1e-5" \
  '"$params" diff "$tmp/one3-0002.params" "$tmp/uneven-0002.params" --tol 1e-5 > "$tmp/diffu" 2>&1' ||
  tail -3 "$tmp/diffu"

# Host 2's rank killed mid-run: the job ends, naming the lost process, within 10 s.
cp "$config" "$tmp/host2.yaml"  # a name that finds host 2's process
long=(--set log_level=warn --set epochs=100000 --set kvstore=mpi --set devices=cpu:0)
timeout 120 bash "$hosts" mpirun -np 1 --host 10.213.0.11 "$train" --config "$config" "${long[@]}" : \
  -np 1 --host 10.213.0.12 "$train" --config "$tmp/host2.yaml" "${long[@]}" > "$tmp/kill.log" 2>&1 &
job=$!
pid=""
for _ in $(seq 1 100); do
  for p in $(pgrep -x cohort-train); do grep -q "$tmp/host2.yaml" "/proc/$p/cmdline" 2>/dev/null && pid=$p; done
  [[ -n $pid ]] && break
  sleep 0.1
done
sleep 2  # training under way
kill -9 "$pid"
killed=$(date +%s.%N)
wait $job; code=$?
seconds=$(seconds_since "$killed")
check "killing host 2's rank ends the job (exit $code) within 10 s ($seconds s)" \
  '[[ -n $pid && $code -ne 0 && $code -ne 124 ]] && awk -v s="$seconds" "BEGIN { exit !(s < 10) }"' ||
  tail -5 "$tmp/kill.log"
# lose_host LOG [MPIRUN_OPTIONS...]: trains on hosts 1 and 2, takes host 2's link down once
# training is under way, and sets code (the job's exit) and seconds (from the cut to its end).
lose_host() {
  local log=$1
  shift
  ip -n "${COHORT_NETNS_PREFIX}2" link set eth0 up
  timeout 120 bash "$hosts" mpirun "$@" -np 1 --host 10.213.0.11 "$train" --config "$config" \
    "${long[@]}" : -np 1 --host 10.213.0.12 "$train" --config "$config" "${long[@]}" > "$log" 2>&1 &
  local job=$!
  sleep 4  # training under way
  ip -n "${COHORT_NETNS_PREFIX}2" link set eth0 down
  local cut
  cut=$(date +%s.%N)
  wait $job; code=$?
  seconds=$(seconds_since "$cut")
}
# Host 2's link taken down mid-run: the collective deadline ends rank 0, and mpirun, told by its
# TCP keepalive that host 2 is gone, ends the job (before the keepalive it waited for minutes).
lose_host "$tmp/link.log" -x COHORT_COMM_TIMEOUT=3
check "a lost host ends the job (exit $code) within 20 s ($seconds s)" \
  '[[ $code -ne 0 ]] && awk -v s="$seconds" "BEGIN { exit !(s < 20) }" && grep -q "COHORT_COMM_TIMEOUT" "$tmp/link.log"' ||
  tail -5 "$tmp/link.log"
# The same with the default deadline (600 s): the ring's keepalive tells the watchdog of the
# rank waiting in any collective that host 2 is gone (Note [TCP ring liveness]), and it says so
# (it said nothing before, mpirun's own keepalive ending the job): the watchdog of a rank waiting
# in one of MPI's collectives (exit 124), or the ring's own read when it waits there (exit 1);
# mpirun may report its own 205 when its keepalive, a second or two later, wins the race.
lose_host "$tmp/lost.log"
check "a lost host is named by Cohort (exit $code) within 20 s ($seconds s)" \
  '[[ $code -eq 124 || $code -eq 1 || $code -eq 205 ]] && awk -v s="$seconds" "BEGIN { exit !(s < 20) }" && grep -Eq "rank 1 \(host 10\.213\.0\.12\) .*no keepalive probe" "$tmp/lost.log"' ||
  tail -5 "$tmp/lost.log"
exit $fail
