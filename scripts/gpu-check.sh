#!/usr/bin/env bash
# Run ON THE GPU MACHINE, from the repository root, after scripts/fetch-gpu-deps.sh ran here and
# .deps was carried there. That machine has nvcc, CMake, ninja and PyTorch (with NVIDIA's cuDNN and
# NCCL wheels) but no Debian packages and no network, so this script:
#   1. unpacks the carried .deb files into .deps/root (dpkg -x) and points CMake at them,
#   2. finds cuDNN and NCCL (a system install, else PyTorch's nvidia-* wheels),
#   3. builds Cohort with CUDA into build-gpu and runs every test (GPU tests included; the MPI
#      tests need an mpirun, which is not carried, and are run on CPU machines instead),
#   4. prints the GPU tests' results, runs them again under compute-sanitizer (memcheck, racecheck),
#      prints the all-reduce bandwidth over the machine's GPUs, and
#      LeNet and ResNet-20 training speed on gpu:0 beside PyTorch on the same GPU (JSON lines),
#   5. ends with a PASSED/FAILED line.
# Usage: scripts/gpu-check.sh [ctest -R regex]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
root=$top/.deps/root
lib=$root/usr/lib/x86_64-linux-gnu

[[ -d .deps/debs ]] || { echo "gpu-check: .deps/debs missing: run scripts/fetch-gpu-deps.sh first" >&2; exit 2; }
if [[ ! -d $root ]]; then
  mkdir -p "$root"
  for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi

# cuDNN and NCCL: headers and unversioned library links in one prefix each.
find_nvidia() {  # find_nvidia NAME HEADER LIB -> prints a prefix with include/ and lib/
  local name=$1 header=$2 libname=$3 dir
  for dir in /usr/local/cuda /usr /usr/local; do
    if [[ -f $dir/include/$header ]] && ls "$dir"/lib*/lib"$libname".so* >/dev/null 2>&1; then
      echo "$dir"; return
    fi
  done
  dir=$(python3 -c "import nvidia.$name, os; print(os.path.dirname(nvidia.$name.__file__) if nvidia.$name.__file__ else list(nvidia.$name.__path__)[0])" 2>/dev/null) || return 1
  local prefix=$top/.deps/$name
  mkdir -p "$prefix/lib"
  ln -sfn "$dir/include" "$prefix/include"
  for so in "$dir"/lib/lib*.so.*; do
    ln -sf "$so" "$prefix/lib/$(basename "$so")"
    ln -sf "$so" "$prefix/lib/$(basename "$so" | sed 's/\.so\..*/.so/')"
  done
  echo "$prefix"
}
export CUDNN_ROOT=${CUDNN_ROOT:-$(find_nvidia cudnn cudnn.h cudnn)}
export NCCL_ROOT=${NCCL_ROOT:-$(find_nvidia nccl nccl.h nccl || true)}
echo "gpu-check: cuDNN from $CUDNN_ROOT, NCCL from ${NCCL_ROOT:-nowhere}"

export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_PATH=$lib/openblas-pthread/pkgconfig:$lib/pkgconfig:$root/usr/share/pkgconfig
system_ld_path=${LD_LIBRARY_PATH:-}  # PyTorch's own libraries, for the peer benchmark
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread:$lib/openmpi/lib:$CUDNN_ROOT/lib:${NCCL_ROOT:+$NCCL_ROOT/lib:}${LD_LIBRARY_PATH:-}
export CMAKE_POLICY_VERSION_MINIMUM=3.5  # CMake 4 refuses some Debian config files otherwise
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_TESTS=ON \
  -DCMAKE_PREFIX_PATH="$root/usr" -DCOHORT_CUDA_ARCHS=90 \
  -DMPI_C_HEADER_DIR="$lib/openmpi/include" -DMPI_C_LIB_NAMES=mpi \
  -DMPI_mpi_LIBRARY="$lib/libmpi.so.40" -DMPIEXEC_EXECUTABLE=/bin/false
cmake --build build-gpu -j "$(nproc)"

status=0
ctest --test-dir build-gpu --output-on-failure -j 8 -E mpi ${1:+-R "$1"} || status=$?
echo "gpu-check: GPU tests (a skipped test says why)"
for t in ndarray/ndarray_test:'*Gpu*' operator/operator_test:'GpuOps*:GpuDropout*' \
         executor/executor_test:'ExecutorGpu*' kvstore/kvstore_test:'Nccl*:FiniteCheck*' \
         trainer/trainer_test:'GpuTrainer*' metric/metric_test:'CompositeGpu*'; do
  build-gpu/tests/${t%%:*} --gtest_filter="${t#*:}" --gtest_brief=1 || status=$?
done

# compute-sanitizer (the CUDA toolkit's): memcheck (out-of-bounds and misaligned accesses, leaks
# of device memory) and racecheck (shared-memory hazards in our block reductions) over the GPU
# tests of every op, the executor and the trainer. Slow (minutes): GPU_CHECK_SANITIZE=0 skips it.
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ ${GPU_CHECK_SANITIZE:-1} != 0 && -x $sanitizer ]]; then
  for tool in memcheck racecheck; do
    extra=""
    [[ $tool == memcheck ]] && extra="--leak-check full"
    for t in operator/operator_test:'GpuOps*:GpuDropout*' executor/executor_test:'ExecutorGpu*' \
             trainer/trainer_test:'GpuTrainer.OneGpuEqualsCpu'; do
      echo "gpu-check: compute-sanitizer --tool $tool ${t%%:*} ${t#*:}"
      # shellcheck disable=SC2086  # extra is a list of flags
      "$sanitizer" --tool "$tool" $extra --error-exitcode 3 --print-limit 20 \
        build-gpu/tests/${t%%:*} --gtest_filter="${t#*:}" --gtest_brief=1 || status=$?
    done
  done
fi

# All-reduce bandwidth over every GPU of this machine (nccl-tests style, self-checking).
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [[ $gpus -gt 0 ]]; then
  build-gpu/apps/cohort-allreduce-bench --kvstore device --devices "gpu:0-$((gpus - 1))" \
    --min-bytes 4K --max-bytes 256M --factor 4 || status=$?
fi

# Training speed on gpu:0, Cohort beside PyTorch on the same GPU, same batch, same model, each
# from host batches: one JSON line per model, cohort_over_pytorch > 1 when Cohort is faster.
batch=${GPU_CHECK_BATCH:-128}
steps=${GPU_CHECK_STEPS:-100}
for model in lenet resnet20; do
  shape=$([[ $model == lenet ]] && echo '[1,28,28]' || echo '[3,32,32]')
  # The second epoch's samples/s (the first pays for cuDNN plans and the caching pool); profiling
  # is off, since it waits for the GPU after every op.
  rm -f "build-gpu/$model.jsonl"
  build-gpu/apps/cohort-train --config configs/synthetic_resnet20.yaml \
    --set model.name=$model --set data.shape="$shape" --set devices=gpu:0 \
    --set batch_size="$batch" --set epochs=2 --set data.num_samples=$((batch * steps)) \
    --set data.val_samples="$batch" --set log_every=0 --set log_level=warn \
    --metrics-out "build-gpu/$model.jsonl" || status=$?
  cohort_sps=$(tail -n 1 "build-gpu/$model.jsonl" 2>/dev/null |
    sed 's/.*"samples_per_sec":\([0-9.e+]*\).*/\1/' || true)
  torch_sps=$(env LD_LIBRARY_PATH="$system_ld_path" python3 scripts/bench_torch_gpu.py "$model" \
    "$batch" "$steps" | sed 's/.*"samples_per_sec": \([0-9.]*\).*/\1/') || status=$?
  python3 -c '
import json, sys
model, batch, c, t = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
c, t = (float(c) if c else None), (float(t) if t else None)
print(json.dumps({"bench": "gpu_train", "model": model, "batch": batch,
                  "cohort_samples_per_sec": c and round(c), "pytorch_samples_per_sec": t and round(t),
                  "cohort_over_pytorch": round(c / t, 2) if c and t else None}))' \
    "$model" "$batch" "${cohort_sps:-}" "${torch_sps:-}"
done
echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)"
exit $status
