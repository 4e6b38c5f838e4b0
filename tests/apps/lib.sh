# Sourced by the CLI tests here: a scratch directory $tmp removed at exit, `check NAME CONDITION`
# (prints ok/FAIL, sets fail=1 and returns 1 when CONDITION, eval'ed, is false), and
# `mpi_command MPIEXEC`, which sets the array mpi to the mpirun command line these tests use.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; return 1; fi; }
mpi_command() {
  mpi=("$1" --oversubscribe --bind-to none)
  if [[ $(id -u) -eq 0 ]]; then mpi+=(--allow-run-as-root); fi
}
