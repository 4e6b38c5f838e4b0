#!/usr/bin/env bash
# mpirun's launch agent for scripts/netns-hosts.sh (--mca plm_rsh_agent): called as ssh would be,
# `netns-agent.sh [options] HOST COMMAND...`, it runs COMMAND in HOST's namespace under HOST's
# own host name, so that each namespace is a host to Open MPI. HOST is an address 10.213.0.(10+i)
# or the name PREFIXi (COHORT_NETNS_PREFIX, default cohort-h).
set -eu
while [[ $# -gt 0 && $1 == -* ]]; do shift; done  # ssh options mpirun may pass
host=$1
shift
subnet=${COHORT_NETNS_SUBNET:-10.213.0}  # as netns-hosts.sh, which exports them
prefix=${COHORT_NETNS_PREFIX:-cohort-h}
case "$host" in
  "$subnet".*) i=$(( ${host##*.} - 10 )) ;;
  "$prefix"*) i=${host#"$prefix"} ;;
  *) echo "netns-agent: '$host' is not a netns-hosts.sh host" >&2; exit 255 ;;
esac
exec ip netns exec "$prefix$i" unshare --uts sh -c 'hostname "$0"; eval "$1"' "$prefix$i" "$*"
