#!/usr/bin/env bash
# Several hosts on one machine for multi-host tests, made of Linux network namespaces:
#   scripts/netns-hosts.sh up N     hosts cohort-h1 .. cohort-hN at 10.213.0.11 .. 10.213.0.(10+N)
#   scripts/netns-hosts.sh down     removes them
#   scripts/netns-hosts.sh mpirun ARGS...   runs mpirun on host 1 with the launch agent, TCP
#                                   between hosts and shared memory inside one (use -np K
#                                   --host IP,IP,... or --hostfile in ARGS)
# Each host is a namespace with a veth pair to a bridge that lives in a namespace of its own
# (cohort-sw): the hosts reach each other and nothing else, and nothing outside the namespaces
# made here is addressed. scripts/netns-agent.sh is the launch agent (mpirun's
# plm_rsh_agent): it runs orted inside the host's namespace, under its own host name. The
# keepalive settings make mpirun notice a host whose link is gone in seconds: without them a
# rank's MPI_Abort left mpirun waiting on the lost host's orted ("abort is already in progress")
# for minutes.
# Needs root and iproute2; says so and exits 3 when namespaces cannot be made.
# COHORT_NETNS_PREFIX (default cohort-h) names the hosts PREFIX1 .. PREFIXN and their switch
# PREFIXsw, COHORT_NETNS_SUBNET (default 10.213.0) gives their /24: runs with different prefixes
# (CTest's multihost_cli takes one of its own each run) never remove or meet each other's hosts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
subnet=${COHORT_NETNS_SUBNET:-10.213.0}
ns_prefix=${COHORT_NETNS_PREFIX:-cohort-h}
switch=${ns_prefix}sw
export COHORT_NETNS_SUBNET=$subnet COHORT_NETNS_PREFIX=$ns_prefix  # for netns-agent.sh

require() {
  if [[ $(id -u) -ne 0 ]] || ! command -v ip > /dev/null; then
    echo "netns-hosts: needs root and iproute2 (ip) to make network namespaces" >&2
    exit 3
  fi
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^($ns_prefix[0-9]+|$switch)$" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  local n=$1
  down
  if ! ip netns add "$switch" 2>/dev/null; then
    echo "netns-hosts: cannot make network namespaces here (ip netns add failed)" >&2
    exit 3
  fi
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 up
  ip -n "$switch" link set lo up
  for i in $(seq 1 "$n"); do
    local ns=$ns_prefix$i
    ip netns add "$ns"
    ip link add "vh$i" netns "$ns" type veth peer name "vs$i" netns "$switch"
    ip -n "$ns" link set "vh$i" name eth0
    ip -n "$ns" addr add "$subnet.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$switch" link set "vs$i" master br0
    ip -n "$switch" link set "vs$i" up
  done
  echo "netns-hosts: $n hosts up: $(seq -s, -f "$subnet.%g" 11 $((10 + n)))"
}

case "${1:-}" in
  up) require; up "${2:?usage: netns-hosts.sh up N}" ;;
  down) require; down ;;
  mpirun)
    shift
    exec ip netns exec "${ns_prefix}1" unshare --uts sh -c 'hostname "$0"; exec "$@"' \
      "${ns_prefix}1" mpirun --allow-run-as-root --oversubscribe \
      --mca plm_rsh_agent "$here/netns-agent.sh" \
      --mca btl self,vader,tcp --mca btl_tcp_if_include "$subnet.0/24" \
      --mca oob_tcp_if_include "$subnet.0/24" \
      --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 \
      --mca oob_tcp_keepalive_probes 3 "$@" ;;
  *) echo "usage: netns-hosts.sh up N | down | mpirun ARGS..." >&2; exit 2 ;;
esac
