#!/usr/bin/env bash
# cohort-im2rec and data.kind imagerecord end to end: a folder per class of JPEGs (made by cjpeg)
# packed into .lst/.rec/.idx, trained on by cohort-train to high accuracy, and bad input: an
# undecodable image is skipped and reported, a torn .rec is exit 2 naming the file and record.
set -u
im2rec=$1 train=$2 config=$3 predict=$4
source "$(dirname "$0")/lib.sh"
# Class "dark" (levels 0..99) and class "light" (150..249), 16 images of 16x16 each, a texture
# that differs per image.
for i in $(seq 0 15); do
  for class in dark light; do
    mkdir -p "$tmp/images/$class"
    base=$([[ $class == dark ]] && echo 0 || echo 150)
    awk -v b="$base" -v s="$i" 'BEGIN { print "P2\n16 16\n255"; for (p = 0; p < 256; p++) printf "%d ", b + (p * 7 + s * 13) % 100; print "" }' |
      cjpeg -quality 90 > "$tmp/images/$class/$i.jpg"
  done
done
printf 'not an image' > "$tmp/images/light/broken.jpg"
"$im2rec" "$tmp/set" "$tmp/images" > "$tmp/im2rec.log" 2>&1
check "im2rec packs a folder per class, skipping what does not decode" \
  '[[ $? -eq 0 ]] && grep -q "32 record(s), 1 skipped" "$tmp/im2rec.log" && grep -q "skipped light/broken.jpg" "$tmp/im2rec.log"'
check "the list has one line per image, labels by class" \
  '[[ $(wc -l < "$tmp/set.lst") -eq 33 ]] && grep -qP "^\d+\t0.000000\tdark/3.jpg$" "$tmp/set.lst" && grep -qP "^\d+\t1.000000\tlight/3.jpg$" "$tmp/set.lst"'
check "the index has one line per record" '[[ $(wc -l < "$tmp/set.idx") -eq 32 ]]'
check "the class map beside the list" '[[ "$(cat "$tmp/set.classes")" == $'"'"'0\tdark\n1\tlight'"'"' ]]'
# Splits as im2rec.py's make_list, and another folder numbered by the first one's class map.
"$im2rec" --list --recursive --train-ratio 0.75 --test-ratio 0.125 "$tmp/split" "$tmp/images" > /dev/null 2>&1
check "--train-ratio/--test-ratio write _train, _val and _test lists" \
  '[[ $(wc -l < "$tmp/split_train.lst") -eq 24 && $(wc -l < "$tmp/split_test.lst") -eq 4 && $(wc -l < "$tmp/split_val.lst") -eq 5 ]]'
mkdir -p "$tmp/val/light" && cp "$tmp/images/light/3.jpg" "$tmp/val/light/"
"$im2rec" --list --recursive --classes "$tmp/set.classes" "$tmp/val" "$tmp/val" > /dev/null 2>&1
check "a split missing a class keeps the numbering of the class map given" \
  'grep -qP "^0\t1.000000\tlight/3.jpg$" "$tmp/val.lst"'

common=(--config "$config" --set model.name=mlp --set model.num_classes=2
  --set data.train_rec="$tmp/set.rec" --set data.train_idx="$tmp/set.idx"
  --set data.val_rec="$tmp/set.rec" --set data.val_idx="$tmp/set.idx"
  --set 'data.data_shape=[3, 12, 12]' --set batch_size=8 --set log_every=0)
"$train" "${common[@]}" --set epochs=4 --metrics-out "$tmp/m.jsonl" \
  --set checkpoint.prefix="$tmp/ck" > "$tmp/train.log" 2>&1
check "cohort-train trains on the records" '[[ $? -eq 0 && $(wc -l < "$tmp/m.jsonl") -eq 4 ]]'
check "to validation accuracy 1" 'tail -1 "$tmp/m.jsonl" | grep -q "\"val\":{\"accuracy\":1[,.}]"'
"$predict" "${common[@]}" --symbol "$tmp/ck-symbol.json" --params "$tmp/ck-0004.params" \
  --out "$tmp/preds.csv" > /dev/null 2>&1
check "cohort-predict names the classes from the map beside the records" \
  '[[ $(head -1 "$tmp/preds.csv") == index,source,label,label_class,predicted,predicted_class,p0,p1 ]] && grep -qP "^\d+,\"[^\"]*\",1,light,1,light," "$tmp/preds.csv" && grep -qP "^\d+,\"[^\"]*\",0,dark,0,dark," "$tmp/preds.csv"'

head -c 3000 "$tmp/set.rec" > "$tmp/torn.rec"
# (with the whole file's index: its entries are checked against the file before training)
out=$("$train" "${common[@]}" --set data.train_rec="$tmp/torn.rec" 2>&1); code=$?
check "a torn record file is exit 2 naming the file, the index entry and the byte" \
  '[[ $code -eq 2 && "$out" == *"torn.rec'"'"' ends at byte 3000, before the record of "*"set.idx'"'"' entry "* ]]'
out=$("$train" "${common[@]}" --set 'data.data_shape=[3, 20, 20]' 2>&1); code=$?
check "images smaller than data_shape are exit 2 naming the record" \
  '[[ $code -eq 2 && "$out" == *"is smaller than data_shape'"'"'s 20x20"* ]]'
out=$("$train" "${common[@]}" --set 'data.data_shape=[3, 12]' 2>&1); code=$?
check "a data_shape without 3 dimensions is exit 2" '[[ $code -eq 2 && "$out" == *"data.data_shape"* ]]'
out=$("$im2rec" --encoding .gif "$tmp/set2" "$tmp/images" 2>&1); code=$?
check "im2rec refuses an unknown encoding before writing a list" \
  '[[ $code -eq 2 && "$out" == *".jpg or .png"* && ! -e "$tmp/set2.lst" ]]'
out=$("$im2rec" --resize 100000 "$tmp/set3" "$tmp/images" 2>&1); code=$?
check "a resize past what an image may hold is exit 2 before any work" \
  '[[ $code -eq 2 && "$out" == *"resize must be in [0, 16384]"* && ! -e "$tmp/set3.lst" ]]'
: > "$tmp/empty.lst"
out=$("$im2rec" "$tmp/empty" "$tmp/images" 2>&1); code=$?
check "an empty list is exit 2 naming it" '[[ $code -eq 2 && "$out" == *"empty.lst'"'"' lists no image"* ]]'
# A list may name anything: a device that never ends and a FIFO that would block are skipped
# and named, not read (a bounded run: `timeout`).
mkfifo "$tmp/images/pipe.jpg"
printf '0\t0\tdark/3.jpg\n1\t0\t/dev/zero\n2\t1\tpipe.jpg\n' > "$tmp/odd.lst"
out=$(timeout 30 "$im2rec" "$tmp/odd" "$tmp/images" 2>&1); code=$?
check "a device and a FIFO in the list are skipped, named, not read" \
  '[[ $code -eq 0 && "$out" == *"1 record(s), 2 skipped"* && "$out" == *"/dev/zero'"'"' is not a regular file"* && "$out" == *"pipe.jpg'"'"' is not a regular file"* ]]'
exit $fail
