#!/usr/bin/env bash
# Run HERE (a machine with Debian's registry), before scripts/gpu-check.sh runs on the GPU machine,
# which has nvcc, CMake, ninja and PyTorch but no Debian packages and no network. Downloads the
# .deb files of the libraries Cohort builds against into .deps/debs (git-ignored, about 30 MiB);
# carry .deps to the GPU machine, where gpu-check.sh unpacks them with dpkg -x.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15
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
)

mkdir -p .deps/debs
cd .deps/debs
rm -f ./*.deb
apt-get download -qq "${PACKAGES[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true
echo "fetch-gpu-deps: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in .deps/debs"
