#!/usr/bin/env bash
# Run HERE (a machine with Debian's registry), before scripts/gpu-check.sh runs on the GPU machine,
# which has nvcc, gcc, CMake, ninja and PyTorch (with NVIDIA's cuDNN and NCCL wheels) but none of
# the Debian packages Cohort builds against, and no network. Downloads their .deb files into
# .deps/debs (git-ignored, about 30 MiB); carry .deps to the GPU machine (the device tool's
# `carry`), where gpu-check.sh unpacks them with dpkg -x. Anything else under .deps (a root
# unpacked by a dry run here) is removed: the carried tree may not pass 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15 libudev1
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libgtest-dev libgmock-dev
  libdnnl-dev libdnnl2
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers opencl-c-headers opencl-clhpp-headers
  libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev
  libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libgfortran5
  libopenmpi-dev libopenmpi3 openmpi-common libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
  libfabric1 libucx0 libibverbs1 librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200
  libnl-route-3-200 libmunge2 libnuma1
  zlib1g-dev zlib1g
  libjpeg62-turbo-dev libjpeg62-turbo libpng-dev libpng16-16  # io/image_codec.cc
  libre2-dev libre2-9  # base/name_pattern.cc
  pkgconf-bin libpkgconf3  # CMake finds OpenBLAS through pkg-config
)

rm -rf .deps
mkdir -p .deps/debs
cd .deps/debs
status=0
apt-get download -qq "${PACKAGES[@]}" 2> >(grep -v "^W: Download is performed unsandboxed" >&2) ||
  status=$?
count=$(find . -name '*.deb' | wc -l)
if [[ $status -ne 0 || $count -ne ${#PACKAGES[@]} ]]; then
  echo "fetch-gpu-deps: apt-get download gave $count of ${#PACKAGES[@]} packages (exit $status)" >&2
  exit 1
fi
echo "fetch-gpu-deps: $count packages, $(du -sh . | cut -f1) in .deps/debs"
