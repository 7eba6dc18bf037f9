#!/usr/bin/env bash
# scripts/setup.sh — install TDSL's Debian dependencies when missing, then configure and build.
# Idempotent: when every package is present and the build is current it takes about a second.
# Usage: scripts/setup.sh [--no-build]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  cmake ninja-build g++ default-jre-headless antlr4 libantlr4-runtime-dev
  llvm-19-dev llvm-19-tools libclang-19-dev libclang-cpp19-dev clang-19 libomp-19-dev
  libboost-program-options-dev libdlpack-dev googletest libgtest-dev libbenchmark-dev
  python3-numpy libdnnl-dev libopenblas-dev zlib1g-dev libzstd-dev libedit-dev
  libcurl4-openssl-dev libxml2-dev libffi-dev clang-format-19 clang-tidy-19
  dpkg-dev pkgconf graphviz python3-matplotlib nlohmann-json3-dev libxgboost-dev
  libonnx-dev libprotobuf-dev python3-onnx python3-torch python3-torchvision libonnx-testdata
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static dataset-fashion-mnist
)
# (The cross toolchain and QEMU: test/Cross compiles for AArch64 and runs the programs there;
# dataset-fashion-mnist: examples/train and its test.)
# The editor grammar's test runs vscode-textmate under Node.js (editors/); any node >= 18
# with npm will do (Debian's packages where none is installed).
command -v npm > /dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0

build="${TDSL_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2
