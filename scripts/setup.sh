#!/usr/bin/env bash
# Installs every Debian package Cohort needs (only those missing, with one apt-get update) and
# builds into build/ (Release, tests on). Safe to run again: it skips what is present and the
# build is incremental.
#   scripts/setup.sh [--no-build]
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release), CMAKE_ARGS (extra flags).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ pkg-config ccache git
  libtbb-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libdnnl-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libopenmpi-dev openmpi-bin
  libre2-dev  # linear-time name patterns (base/name_pattern.cc)
  python3-dev python3-numpy python3-pytest pybind11-dev  # the Python package (python/)
  libjpeg62-turbo-dev libpng-dev  # JPEG and PNG images in RecordIO files (io/image_codec.cc)
  libjpeg-turbo-progs  # cjpeg, djpeg: scripts/make-image-set.sh, scripts/fuzz-campaign.py
  python3-yaml  # scripts/fuzz-campaign.py's duplicate-key YAML reference
  ocl-icd-opencl-dev opencl-headers  # libdnnl-dev's CMake config looks for OpenCL
  dataset-fashion-mnist
  dict-gcide  # English text (the GNU dictionary) for configs/text_gpt.yaml
  gnuplot-nox  # cohort-plan --plot
  iproute2 util-linux procps  # ip netns, unshare, pgrep: hosts made of namespaces (scripts/netns-hosts.sh)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[[ "${1:-}" == "--no-build" ]] && exit 0

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of flags
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DCOHORT_BUILD_TESTS=ON ${CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
