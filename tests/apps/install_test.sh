#!/usr/bin/env bash
# cmake --install puts the tools in PREFIX/bin, the configurations in PREFIX/share/cohort/configs
# and the Python package below PREFIX/lib, each usable from there.
#   install_test.sh CMAKE BUILD_DIR PYTHON
set -u
cmake=$1 build=$2 python=$3
source "$(dirname "$0")/lib.sh"
"$cmake" --install "$build" --prefix "$tmp/p" > "$tmp/install.log" 2>&1
check "cmake --install exits 0" '[[ $? -eq 0 ]]' || cat "$tmp/install.log"
for tool in cohort-train cohort-predict cohort-params cohort-model cohort-im2rec cohort-plan; do
  check "$tool is installed and runs" '"$tmp/p/bin/$tool" --help > /dev/null'
done
check "the configurations are installed" '[[ -f "$tmp/p/share/cohort/configs/fmnist_lenet.yaml" ]]'
if [[ -d "$build/python/cohort" ]]; then
  where=$(cd "$tmp" && PYTHONPATH="$tmp/p/lib/python3/dist-packages" "$python" -c \
    'import cohort, os; print(os.path.dirname(cohort.__file__)); print(cohort.nd.ones((2,)).asnumpy().sum())' 2>&1)
  check "the installed Python package imports and runs ($where)" \
    '[[ "$where" == "$tmp/p/lib/python3/dist-packages/cohort"*"2.0" ]]'
fi
exit $fail
