#!/usr/bin/env bash
# Checks the second way in (README, Python): `pip install .` into a fresh venv builds the
# extension with scikit-build-core, and the Python tests pass against the installed package
# from outside the checkout (no PYTHONPATH). A second full build: a script, not a CI test.
#   scripts/check-pip-install.sh [VENV_DIR]     (default: a temporary folder, removed after)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$(mktemp -d)/venv}"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
"$venv/bin/pip" install "$repo" pytest
cd "$(mktemp -d)"
unset PYTHONPATH
"$venv/bin/python" - "$venv" <<'PY'
import sys, cohort as mx
assert mx.__file__.startswith(sys.argv[1]), f'cohort imported from {mx.__file__}'
x = mx.nd.ones((2, 3)) * 2
assert x.asnumpy().sum() == 12, x
print('installed at', mx.__file__)
PY
COHORT_TEST_DATA_DIR="$repo/tests/data" # (the example that runs cohort-train needs the plain build's binary, not the package)
"$venv/bin/python" -m pytest -q -k 'not under_cohort_train' "$repo/tests/python"
echo "pip install: OK"
