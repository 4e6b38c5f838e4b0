#!/usr/bin/env bash
# Makes a small image data set in MXNet's im2rec layout from Fashion-MNIST (Debian's
# dataset-fashion-mnist, no download): OUT/images/{train,val}/<class>/<n>.jpg (cjpeg from
# libjpeg-turbo-progs, quality 95), then packs each split with cohort-im2rec (shorter side
# resized to 32, color JPEG) into OUT/train.rec/.idx/.lst and OUT/val.rec/.idx/.lst, which
# configs/imagerecord_resnet20.yaml reads. Needs a build (scripts/setup.sh).
#   scripts/make-image-set.sh [OUT] [TRAIN] [VAL]   (defaults data/image-set, 6000, 1000)
# Environment: IM2REC, the cohort-im2rec to use (default build/apps/cohort-im2rec).
set -euo pipefail
out=${1:-}
[[ -n $out ]] && out=$(realpath -m "$out")  # paths given are the caller's
[[ -n ${IM2REC:-} ]] && IM2REC=$(realpath "$IM2REC")
cd "$(dirname "$0")/.."
out=${out:-data/image-set}
im2rec=${IM2REC:-build/apps/cohort-im2rec}
train=${2:-6000}
val=${3:-1000}
src=/usr/share/datasets/fashion-mnist
for tool in cjpeg "$im2rec"; do
  command -v "$tool" > /dev/null || { echo "make-image-set: $tool is missing (scripts/setup.sh)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# split NAME IDX_PREFIX COUNT: the first COUNT images of IDX_PREFIX as JPEGs, a folder per label.
split_images() {
  local name=$1 idx=$2 count=$3
  local dir="$out/images/$name"
  rm -rf "$dir"
  # (whole files first: a reader that stops early would fail the pipe under pipefail)
  gzip -dc "$src/$idx-images-idx3-ubyte.gz" > "$tmp/images"
  gzip -dc "$src/$idx-labels-idx1-ubyte.gz" > "$tmp/labels"
  head -c $((16 + count * 784)) "$tmp/images" | tail -c +17 | split -b 784 -d -a 5 - "$tmp/$name-"
  head -c $((8 + count)) "$tmp/labels" | tail -c +9 | od -An -tu1 -v -w1 | tr -d ' ' > "$tmp/$name-labels"
  local i=0 label
  while read -r label; do
    mkdir -p "$dir/$label"
    local part
    part=$(printf '%s/%s-%05d' "$tmp" "$name" "$i")
    { printf 'P5\n28 28\n255\n'; cat "$part"; } | cjpeg -quality 95 > "$dir/$label/$i.jpg"
    i=$((i + 1))
  done < "$tmp/$name-labels"
  rm -f "$out/$name.lst"
  "$im2rec" --resize 32 --num-thread 2 "$out/$name" "$dir"
}

mkdir -p "$out"
split_images train train "$train"
split_images val t10k "$val"
