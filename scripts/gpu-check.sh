#!/usr/bin/env bash
# Run ON THE GPU MACHINE, from the repository root, after scripts/fetch-gpu-deps.sh ran here and
# .deps was carried there. That machine has nvcc, gcc, CMake, ninja and PyTorch (with NVIDIA's
# cuDNN and NCCL wheels) but no Debian packages and no network. This script
#   - unpacks the carried .deb files into /tmp/cohort-gpu-deps (dpkg -x), points CMake at them, finds
#     cuDNN and NCCL (a system install, else PyTorch's nvidia-* wheels; NCCL is required),
#   - build:    builds Cohort with CUDA into build-gpu (keeps going past a failing target),
#   - test:     runs the tests that need a GPU (ctest -R "$GPU_CHECK_TESTS"; the CPU suite is CI's,
#               and its MPI, dictionary and image tests need what is not carried),
#   - sanitize: runs the GPU tests of the ops, the executor and the trainer under
#               compute-sanitizer (memcheck without the caching pool, racecheck on Cohort's own
#               kernels), each under a time limit,
#   - bench:    the all-reduce bandwidth over the machine's GPUs, and LeNet, ResNet-20 and GPT
#               training on gpu:0 beside PyTorch on the same GPU, in float32, bfloat16 and float16
#               (Cohort's `precision`, PyTorch's autocast) (JSON lines; GPT samples are
#               windows of 128 tokens),
#   - profile:  cohort-train --profile of ResNet-20 and the GPT on gpu:0 in float32 and bfloat16
#               (profile.txt: each op's milliseconds; the ten slowest op types in the log),
# and ends with a PASSED/FAILED line. Each phase prints its seconds.
#
# Usage: scripts/gpu-check.sh [build] [test] [sanitize] [bench] [profile]
#        (default: build test bench)
# One device call (10 minutes at most) fits the default (about 4 minutes on an H100 machine, the
# build 2 of them); run `build sanitize profile` in a second call (the build is kept between calls
# while the machine is warm, else made again). Every step stops by GPU_CHECK_SECONDS (default 560) after the start, so the
# script ends, with its PASSED/FAILED line, inside the call.
# Environment: OUT (the device tool's folder: the log and results are copied there),
# GPU_CHECK_TESTS (ctest regex, default gpu_tests below: every test with GPU cases, 270),
# GPU_CHECK_BATCH (128), GPU_CHECK_PRECISIONS ("float32 bfloat16 float16"),
# GPU_CHECK_STEPS (100), GPU_CHECK_SECONDS.
set -uo pipefail # not -e: a failing step is counted in status and the others still run
gpu_tests=${GPU_CHECK_TESTS:-'Gpu|Nccl|FiniteCheck|LowPrecision|Amp|DTypeExecutor|Scalar|LossScaler|MultiPrecision|MaskedSoftmax|BatchNorm|Fusion'}
cd "$(dirname "$0")/.."
top=$PWD
root=/tmp/cohort-gpu-deps # unpacked outside the carried tree (which may not pass 64 MiB)
lib=$root/usr/lib/x86_64-linux-gnu
phases=("$@")
((${#phases[@]})) || phases=(build test bench)
for phase in "${phases[@]}"; do
  [[ $phase =~ ^(build|test|sanitize|bench|profile)$ ]] ||
    { echo "gpu-check: unknown phase '$phase' (build, test, sanitize, bench, profile)" >&2; exit 2; }
done
results_dir=${OUT:-build-gpu}
mkdir -p "$results_dir"
results=$results_dir/gpu-results.jsonl
tee_pid=""
if [[ -n ${OUT:-} ]]; then
  exec > >(tee -a "$OUT/gpu-check.log") 2>&1
  tee_pid=$!
fi
deadline=$((SECONDS + ${GPU_CHECK_SECONDS:-560}))
# limit SECONDS: SECONDS, or what is left before the deadline (at least 1).
limit() { local left=$((deadline - SECONDS)); ((left < $1)) && echo $((left > 1 ? left : 1)) || echo "$1"; }
status=0
fail() { # fail WHAT: counts a failed step
  echo "gpu-check: FAILED: $*"
  status=1
}
phase_start=$SECONDS
phase_done() { echo "gpu-check: $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }

[[ -d .deps/debs ]] || { echo "gpu-check: .deps/debs missing: run scripts/fetch-gpu-deps.sh first" >&2; exit 2; }
if [[ ! -f $root/.unpacked ]]; then # a half-done unpack is done again (kept while warm)
  rm -rf "$root"
  mkdir -p "$root"
  for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root" || { echo "gpu-check: cannot unpack $deb" >&2; exit 2; }; done
  touch "$root/.unpacked"
fi

# cuDNN and NCCL: headers and unversioned library links in one prefix each.
find_nvidia() { # find_nvidia NAME HEADER LIB -> prints a prefix with include/ and lib/
  local name=$1 header=$2 libname=$3 dir
  for dir in /usr/local/cuda /usr /usr/local; do
    if [[ -f $dir/include/$header ]] && ls "$dir"/lib*/lib"$libname".so* >/dev/null 2>&1; then
      echo "$dir"
      return
    fi
  done
  dir=$(python3 -c "import nvidia.$name, os; print(os.path.dirname(nvidia.$name.__file__) if nvidia.$name.__file__ else list(nvidia.$name.__path__)[0])" 2>/dev/null) || return 1
  local prefix=$root-$name
  mkdir -p "$prefix/lib"
  ln -sfn "$dir/include" "$prefix/include"
  for so in "$dir"/lib/lib*.so.*; do
    ln -sf "$so" "$prefix/lib/$(basename "$so")"
    ln -sf "$so" "$prefix/lib/$(basename "$so" | sed 's/\.so\..*/.so/')"
  done
  echo "$prefix"
}
CUDNN_ROOT=${CUDNN_ROOT:-$(find_nvidia cudnn cudnn.h cudnn || true)}
NCCL_ROOT=${NCCL_ROOT:-$(find_nvidia nccl nccl.h nccl || true)}
export CUDNN_ROOT NCCL_ROOT
echo "gpu-check: cuDNN from ${CUDNN_ROOT:-nowhere}, NCCL from ${NCCL_ROOT:-nowhere}"
[[ -n $CUDNN_ROOT && -n $NCCL_ROOT ]] || { echo "gpu-check: cuDNN and NCCL are both needed" >&2; exit 2; }

command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib64
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_PATH=$lib/openblas-pthread/pkgconfig:$lib/pkgconfig:$root/usr/share/pkgconfig
export CPATH=$root/usr/include/x86_64-linux-gnu # Debian's jconfig.h (jpeglib.h includes it)
system_ld_path=${LD_LIBRARY_PATH:-} # PyTorch's own libraries, for the peer benchmark
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread:$lib/openmpi/lib:$CUDNN_ROOT/lib:$NCCL_ROOT/lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CMAKE_POLICY_VERSION_MINIMUM=3.5 # CMake 4 refuses some Debian config files otherwise
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)

build() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_TESTS=ON \
    -DCMAKE_PREFIX_PATH="$root/usr" -DCOHORT_CUDA_ARCHS=90 \
    -DPKG_CONFIG_EXECUTABLE="$root/usr/bin/pkgconf" \
    -DMPI_C_HEADER_DIR="$lib/openmpi/include" -DMPI_C_LIB_NAMES=mpi \
    -DMPI_mpi_LIBRARY="$lib/libmpi.so.40" -DMPIEXEC_EXECUTABLE=/bin/false ||
    { fail configure; finish; }
  grep "^NCCL_LIBRARY:FILEPATH=" build-gpu/CMakeCache.txt | grep -qv NOTFOUND ||
    fail "configure: CMake found no NCCL (COHORT_NCCL off)"
  # -k 0: a target that fails to build leaves the others (and their tests) to run.
  timeout "$(limit 480)" cmake --build build-gpu -j "$(nproc)" -- -k 0 || fail build
}

run_tests() {
  timeout "$(limit 300)" ctest --test-dir build-gpu -R "$gpu_tests" \
    -j 4 --no-tests=error --output-on-failure || fail "GPU tests"
  # Each skipped test and why (two-GPU cases on a one-GPU machine).
  awk '/: Skipped$/ { getline why; getline name; sub(/ \(.*/, "", name); sub(/.*\] /, "", name);
       print "gpu-check: skipped " name ": " why }' build-gpu/Testing/Temporary/LastTest.log
  [[ -n ${OUT:-} ]] && cp build-gpu/Testing/Temporary/LastTest.log "$OUT/ctest-gpu.log"
  # A GPU that CUDA cannot reach (no driver library found) skips every test: ctest counts that
  # as passing.
  if [[ $gpus -gt 0 ]] && grep -q "^no GPU visible" build-gpu/Testing/Temporary/LastTest.log; then
    fail "nvidia-smi lists $gpus GPU(s) but the tests saw none"
  fi
}

# compute-sanitizer (the CUDA toolkit's): memcheck (out-of-bounds and misaligned accesses, leaks)
# with COHORT_GPU_MEM_POOL=0, since the caching pool's rounded, reused blocks hide overruns from
# it; racecheck (shared-memory hazards in the block reductions) on Cohort's kernels only, since
# cuBLAS's and cuDNN's would take it hours. NCCL is left out: its own reports are not ours.
sanitize() {
  local sanitizer only help t
  sanitizer=$(command -v compute-sanitizer || echo "$(dirname "$cuda_lib")/bin/compute-sanitizer")
  [[ -x $sanitizer ]] || { fail "no compute-sanitizer"; return; }
  help=$("$sanitizer" --help 2>&1)
  only="--filter kns=cohort"
  [[ $help == *--kernel-name* ]] && only="--kernel-name kns=cohort"
  for t in operator/operator_test:'AllOps/GpuOps.*:GpuDropout*' \
    executor/executor_test:'ExecutorGpu*' trainer/trainer_test:'GpuTrainer.OneGpuEqualsCpu'; do
    echo "gpu-check: compute-sanitizer --tool memcheck ${t%%:*} ${t#*:}"
    COHORT_GPU_MEM_POOL=0 timeout "$(limit 240)" "$sanitizer" --tool memcheck --leak-check full \
      --error-exitcode 3 --print-limit 20 build-gpu/tests/${t%%:*} --gtest_filter="${t#*:}" \
      --gtest_brief=1 || fail "memcheck ${t#*:}"
    echo "gpu-check: compute-sanitizer --tool racecheck $only ${t%%:*} ${t#*:}"
    # shellcheck disable=SC2086  # only is two words
    timeout "$(limit 240)" "$sanitizer" --tool racecheck $only --error-exitcode 3 --print-limit 20 \
      build-gpu/tests/${t%%:*} --gtest_filter="${t#*:}" --gtest_brief=1 || fail "racecheck ${t#*:}"
  done
}

# The batch of each model: LeNet and ResNet-20 GPU_CHECK_BATCH (128), the GPT configs/text_gpt.yaml's
# 32 windows of 128 tokens (4096 tokens a step).
batch_of() { [[ $1 == gpt ]] && echo 32 || echo "${GPU_CHECK_BATCH:-128}"; }

# cohort_train MODEL PRECISION STEPS EPOCHS [ARGS...]: MODEL (lenet, resnet20 on generated images;
# gpt on the repository's sources, whose bytes do not change the speed: dict-gcide is not on the
# GPU machine) trained on gpu:0 without metrics or logs, STEPS batches an epoch.
cohort_train() {
  local model=$1 precision=$2 steps=$3 epochs=$4 batch shape
  shift 4
  batch=$(batch_of "$model")
  if [[ $model == gpt ]]; then
    [[ -f build-gpu/text.txt ]] ||
      git ls-files -z '*.cc' '*.h' '*.cu' '*.md' | xargs -0 cat > build-gpu/text.txt
    timeout "$(limit 240)" build-gpu/apps/cohort-train --config configs/text_gpt.yaml \
      --set devices=gpu:0 --set "data.train_files=[$PWD/build-gpu/text.txt]" \
      --set precision="$precision" --set batch_size="$batch" --set epochs="$epochs" \
      --set data.batches_per_epoch="$steps" --set data.val_batches=1 --set 'metrics=[]' \
      --set log_every=0 --set log_level=warn "$@"
  else
    shape=$([[ $model == lenet ]] && echo '[1,28,28]' || echo '[3,32,32]')
    timeout "$(limit 240)" build-gpu/apps/cohort-train --config configs/synthetic_resnet20.yaml \
      --set model.name="$model" --set data.shape="$shape" --set devices=gpu:0 \
      --set precision="$precision" --set batch_size="$batch" --set epochs="$epochs" \
      --set data.num_samples=$((batch * steps)) --set data.val_samples="$batch" \
      --set 'metrics=[]' --set log_every=0 --set log_level=warn "$@"
  fi
}

# Where a step's time goes on the GPU (cohort-train --profile: phases, then each op's forward and
# backward ms, waiting for the GPU after every op), ResNet-20 and the GPT in float32 and
# bfloat16, 20 steps each, into profile.txt: the serial reductions (bias gradients, broadcast
# backward, BatchNorm's block a channel) show there as ops slower than their bytes warrant.
profile() {
  local model precision out=$results_dir/profile.txt
  for model in resnet20 gpt; do
    for precision in float32 bfloat16; do
      echo "# gpu-check profile: $model $precision, batch $(batch_of $model), $gpu_name" >>"$out"
      cohort_train $model $precision 20 1 --profile >>"$out" 2>&1 ||
        fail "profile $model $precision"
    done
  done
  # The ten slowest op types of each run, for the log.
  awk -F'\t' '/^# gpu-check profile/ { if (n) dump(); title = $0; n = 0; next }
       NF >= 5 && $3 ~ /^[0-9.]+$/ { t[$2] += $3 + $4; n = 1 }
       function dump() { print title; for (k in t) printf "  %-24s %9.3f ms a step\n", k, t[k] | "sort -k2 -rn | head -10"; close("sort -k2 -rn | head -10"); delete t }
       END { if (n) dump() }' "$out"
}

bench() {
  # All-reduce bandwidth over the machine's GPUs (nccl-tests style, self-checking); over one GPU
  # there is nothing to move.
  if [[ $gpus -gt 1 ]]; then
    timeout "$(limit 120)" build-gpu/apps/cohort-allreduce-bench --kvstore device \
      --devices "gpu:0-$((gpus - 1))" --min-bytes 4K --max-bytes 256M --factor 4 |
      tee -a "$results_dir/allreduce.txt" || fail "all-reduce bench"
  fi
  # Training speed on gpu:0, Cohort beside PyTorch on the same GPU, same batch, same model, each
  # from host batches, both in full float32 (no TF32) or both in bfloat16 or float16 (Cohort's
  # AMP pass, PyTorch's autocast and GradScaler), with deterministic cuDNN algorithms (Cohort's
  # default) and without metrics (PyTorch's loop has none): one JSON line per model and precision,
  # cohort_over_pytorch > 1 when Cohort is faster.
  local batch steps=${GPU_CHECK_STEPS:-100} model cohort_sps torch_sps torch_line torch_system
  for precision in ${GPU_CHECK_PRECISIONS:-float32 bfloat16 float16}; do
  for model in lenet resnet20 gpt; do
    batch=$(batch_of $model)
    # The second epoch's samples/s (the first pays for cuDNN plans and the caching pool); profiling
    # is off, since it waits for the GPU after every op.
    rm -f "build-gpu/$model.jsonl"
    cohort_train $model "$precision" "$steps" 2 --metrics-out "build-gpu/$model.jsonl" ||
      fail "cohort-train $model $precision"
    cohort_sps=$(tail -n 1 "build-gpu/$model.jsonl" 2>/dev/null |
      sed -n 's/.*"samples_per_sec":\([0-9.e+]*\).*/\1/p')
    torch_line=$(env LD_LIBRARY_PATH="$system_ld_path" timeout "$(limit 240)" python3 scripts/bench_torch_gpu.py \
      "$model" "$batch" "$steps" "$precision") || fail "PyTorch $model $precision"
    torch_sps=$(sed -n 's/.*"samples_per_sec": \([0-9.]*\).*/\1/p' <<<"$torch_line")
    torch_system=$(sed -n 's/.*"system": "\([^"]*\)".*/\1/p' <<<"$torch_line")
    python3 -c '
import json, sys
model, batch, precision, c, t, system, gpu = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
c, t = (float(c) if c else None), (float(t) if t else None)
print(json.dumps({"bench": "gpu_train", "model": model, "precision": precision, "batch": batch,
                  "gpu": gpu, "tf32": False,
                  "deterministic": True, "metrics": None, "cohort_samples_per_sec": c and round(c),
                  "pytorch_samples_per_sec": t and round(t), "pytorch": system,
                  "cohort_over_pytorch": round(c / t, 2) if c and t else None}))' \
      "$model" "$batch" "$precision" "${cohort_sps:-}" "${torch_sps:-}" "${torch_system:-}" \
      "$gpu_name" | tee -a "$results"
  done
  done
}

finish() { # the verdict, and tee's last lines in $OUT
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)"
  if [[ -n $tee_pid ]]; then
    exec >&- 2>&-
    wait "$tee_pid"
  fi
  exit $status
}

for phase in "${phases[@]}"; do
  ((SECONDS < deadline)) || { fail "no time left for $phase"; continue; }
  case $phase in
    build) build ;;
    test) run_tests ;;
    sanitize) sanitize ;;
    bench) bench ;;
    profile) profile ;;
  esac
  phase_done "$phase"
done
finish
