# Sourced by the CLI tests here: a scratch directory $tmp removed at exit, `check NAME CONDITION`
# (prints ok/FAIL, sets fail=1 and returns 1 when CONDITION, eval'ed, is false), `expect CODE
# PATTERN CMD...` (CMD must exit CODE with output matching the extended regex PATTERN), and
# `mpi_command MPIEXEC`, which sets the array mpi to the mpirun command line these tests use, and
# `seconds_since START` (START from `date +%s.%N`), which prints the seconds since, to 0.1 s.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; return 1; fi; }
seconds_since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
mpi_command() {
  mpi=("$1" --oversubscribe --bind-to none)
  if [[ $(id -u) -eq 0 ]]; then mpi+=(--allow-run-as-root); fi
}
expect() {
  local code=$1 pattern=$2
  shift 2
  local out
  out=$("$@" 2>&1)
  local got=$?
  if [[ $got -ne $code ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $got (want $code), output:"
    echo "$out"
    echo "  (wanted /$pattern/)"
    fail=1
  else
    echo "ok: $*"
  fi
}
