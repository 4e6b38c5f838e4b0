#!/usr/bin/env bash
# mpirun's launch agent for scripts/netns-hosts.sh (--mca plm_rsh_agent): called as ssh would be,
# `netns-agent.sh [options] HOST COMMAND...`, it runs COMMAND in HOST's namespace under HOST's
# own host name, so that each namespace is a host to Open MPI. HOST is an address 10.213.0.(10+i)
# or the name cohort-hi.
set -eu
while [[ $# -gt 0 && $1 == -* ]]; do shift; done  # ssh options mpirun may pass
host=$1
shift
case "$host" in
  10.213.0.*) i=$(( ${host##*.} - 10 )) ;;
  cohort-h*) i=${host#cohort-h} ;;
  *) echo "netns-agent: '$host' is not a netns-hosts.sh host" >&2; exit 255 ;;
esac
exec ip netns exec "cohort-h$i" unshare --uts sh -c 'hostname "$0"; eval "$1"' "cohort-h$i" "$*"
