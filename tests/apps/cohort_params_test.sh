#!/usr/bin/env bash
# cohort-params against MXNet-written files: output lines, and exit codes 0, 1 and 2.
set -u
bin=$1 data=$2
source "$(dirname "$0")/lib.sh"
expect 0 $'^arg:fc1_bias\tfloat32\t\\(6,\\)\tmin=1\tmax=6\tmean=4$' "$bin" show "$data/checkpoint_v2.params"
expect 0 $'^arg:big\tfloat32\t\\(10000,\\)\tmin=0\tmax=9999\tmean=4999.5$' "$bin" show "$data/checkpoint_v2.params"
expect 0 $'^arg:bfloat16\tbfloat16\t\\(2,3\\)\tmin=-2.5\tmax=3\tmean=0.208333333$' "$bin" show "$data/all_dtypes_v2.params"
expect 0 $'^scalar\tfloat32\t\\(\\)\tmin=42.5' "$bin" show "$data/numpy_v3.params"
expect 0 $'^empty\tfloat32\t\\(2,0\\)\tmin=-' "$bin" show "$data/numpy_v3.params"
expect 0 $'^#1\tint32\t\\(1,1\\)\tmin=7' "$bin" show "$data/list_v2.params"
expect 0 $'^arg:fc1_weight\tmax_abs_diff=0$' "$bin" diff "$data/checkpoint_v2.params" "$data/checkpoint_v2.params"
expect 1 'only in .*all_dtypes_v2.params: arg:float32' "$bin" diff "$data/all_dtypes_v2.params" "$data/checkpoint_v2.params"
expect 2 "^cohort-params: cannot open '$tmp/none.params'" "$bin" show "$tmp/none.params"
head -c 200 "$data/checkpoint_v2.params" > "$tmp/cut.params"
expect 2 "^cohort-params: '$tmp/cut.params': array 1: file ends inside" "$bin" show "$tmp/cut.params"
expect 2 "cannot open" "$bin" diff "$data/list_v2.params" "$tmp/none.params"
expect 2 "" "$bin" frobnicate
cp "$data/list_v2.params" "$tmp/changed.params"  # first array [1,2,3] -> [1,2,3.5]
printf '\x00\x00\x60\x40' | dd of="$tmp/changed.params" bs=1 seek=64 conv=notrunc status=none
expect 1 $'^#0\tmax_abs_diff=0.5\tEXCEEDS$' "$bin" diff "$data/list_v2.params" "$tmp/changed.params"
expect 0 $'^#0\tmax_abs_diff=0.5$' "$bin" diff "$data/list_v2.params" "$tmp/changed.params" --tol 0.5
# A tolerance that is not a finite number >= 0 is refused in one line (NaN passed before).
for bad in nan inf -1 abc; do
  expect 2 "^--tol: expected a finite number >= 0, got '$bad'" "$bin" diff "$data/list_v2.params" \
    "$data/list_v2.params" --tol "$bad"
done
# Integers compare exactly: arg:int64's first element 2^62 + 1 against 2^62 (equal as doubles).
cp "$data/all_dtypes_v2.params" "$tmp/big_a.params"
cp "$data/all_dtypes_v2.params" "$tmp/big_b.params"
printf '\x01\x00\x00\x00\x00\x00\x00\x40' | dd of="$tmp/big_a.params" bs=1 seek=424 conv=notrunc status=none
printf '\x00\x00\x00\x00\x00\x00\x00\x40' | dd of="$tmp/big_b.params" bs=1 seek=424 conv=notrunc status=none
expect 1 $'^arg:int64\tmax_abs_diff=1\tEXCEEDS$' "$bin" diff "$tmp/big_a.params" "$tmp/big_b.params"
# Arrays of one name and shape but of other dtypes differ, whatever their values: the names
# arg:float32 and arg:float64 swapped in a copy (same values, float64 against float32).
cp "$data/all_dtypes_v2.params" "$tmp/swapped.params"
printf '64' | dd of="$tmp/swapped.params" bs=1 seek=595 conv=notrunc status=none
printf '32' | dd of="$tmp/swapped.params" bs=1 seek=614 conv=notrunc status=none
expect 1 $'^arg:float32\tmismatch: float32 \\(2,3\\) vs float64 \\(2,3\\)$' "$bin" diff "$data/all_dtypes_v2.params" "$tmp/swapped.params"
echo "not params" > "$tmp/text.params"
expect 2 "not an MXNet NDArray file \(list magic 0x[0-9a-f]+, expected 0x112\)$" "$bin" show "$tmp/text.params"
exit $fail
