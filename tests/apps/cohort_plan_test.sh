#!/usr/bin/env bash
# cohort-plan: its table from an MXNet symbol file and a zoo model, its JSON lines, and exit
# code 2 with one line on bad input.
set -u
bin=$1 data=$2
source "$(dirname "$0")/lib.sh"
# LeNet's 431080 parameters are 1.7 MB of gradients; one device never communicates.
expect 0 '1.7 MB of gradients' "$bin" --model "$data/lenet-symbol.json" --shape data=64,1,28,28 --devices 4
expect 0 '^ +1 +1 +[0-9.]+ +0\.000 +100%' "$bin" --model lenet --shape data=64,1,28,28 --devices 4 --preset this-host
# 8 devices, 4 a host: rows for 1..8 and 2 hosts in the last.
out=$("$bin" --model mlp --shape data=32,784 --devices 8 --devices-per-host 4 --json)
rows=$(grep -c '"devices"' <<<"$out")
if [[ $rows -eq 8 ]] && grep -q '"devices":8,"hosts":2' <<<"$out"; then echo "ok: json rows"; else
  echo "FAIL: json rows: $out"; fail=1; fi
# Efficiency falls when hosts are crossed, and hierarchical beats flat on a slow inter-host link.
flat=$("$bin" --model resnet20 --shape data=32,3,32,32 --devices 8 --devices-per-host 4 \
  --inter-host-gbps 0.1 --flat --json | tail -1 | sed 's/.*"step_ms":\([0-9.]*\).*/\1/')
hier=$("$bin" --model resnet20 --shape data=32,3,32,32 --devices 8 --devices-per-host 4 \
  --inter-host-gbps 0.1 --hierarchical --json | tail -1 | sed 's/.*"step_ms":\([0-9.]*\).*/\1/')
if awk -v f="$flat" -v h="$hier" 'BEGIN { exit !(h < f) }'; then echo "ok: hierarchical $hier < flat $flat ms";
else echo "FAIL: hierarchical $hier ms, flat $flat ms"; fail=1; fi
expect 2 "expected NAME=DIMS" "$bin" --model mlp --shape 1,2 --devices 2
expect 2 "expected this-host or gpu-cluster" "$bin" --model mlp --shape data=1,784 --devices 2 --preset moon
expect 2 "exclude each other" "$bin" --model mlp --shape data=1,784 --devices 2 --flat --hierarchical
expect 2 "cannot read the profile 'missing.tsv'" "$bin" --model mlp --shape data=1,784 --devices 2 --profile missing.tsv
expect 2 "devices must be at least 1" "$bin" --model mlp --shape data=1,784 --devices 0
exit $fail
