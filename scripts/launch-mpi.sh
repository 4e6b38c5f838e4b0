#!/usr/bin/env bash
# Launches cohort-train under mpirun with the MPI kvstore, one worker per process.
#   scripts/launch-mpi.sh NP [--hostfile FILE] [cohort-train args...]
# One host:     scripts/launch-mpi.sh 2 --config configs/fmnist_lenet.yaml --set devices=cpu:0
# Many hosts:   scripts/launch-mpi.sh 8 --hostfile hosts --config cfg.yaml
# (each host needs the same build at the same path and the data files.) As root, mpirun needs
# --allow-run-as-root, which this script adds. Paths in the arguments are the caller's: the
# working directory stays where it was.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=${1:?usage: scripts/launch-mpi.sh NP [--hostfile FILE] [cohort-train args...]}
shift
mpi_args=(-np "$np" --bind-to none)
if [[ "${1:-}" == "--hostfile" ]]; then
  # A lost host must end the job: mpirun learns of it from its TCP keepalive (seconds, not the
  # kernel's default of hours) once a rank's collective deadline has aborted it.
  mpi_args+=(--hostfile "$2" --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1
             --mca oob_tcp_keepalive_probes 3)
  shift 2
else
  mpi_args+=(--oversubscribe)
fi
[[ $(id -u) -eq 0 ]] && mpi_args+=(--allow-run-as-root)
exec mpirun "${mpi_args[@]}" "$root/build/apps/cohort-train" --set kvstore=mpi "$@"
