#!/usr/bin/env bash
# Installs the Debian 12 packages hetccl needs to build and test (run as root). Idempotent and quiet
# when everything is present. Set HETCCL_BENCH_DEPS=1 to add the benchmark baselines (Open MPI, Gloo).
set -euo pipefail
pkgs=(cmake ninja-build g++ libssl-dev libgtest-dev libgmock-dev iproute2 procps python3
      python3-yaml  # deploy/lint_manifests.py
      clang-14 libclang-rt-14-dev nftables  # the asan and libFuzzer builds (clang-14, its sanitizer runtimes); packet drops in the namespace fault suite
      clang-16 lld-16 libamdhip64-dev  # libhetccl-hip.so: amdgcn kernels (clang/lld 16), HIP headers for its signature check
      rocm-device-libs  # a real hiprtc compiles the plugin's embedded kernel source (tests/unit/hip_plugin)
      strace  # tests/mp/ucx_connects_nonblocking.sh: how UCX connects its sockets
      pkgconf  # tests/install/check_install.sh: a program built against the installed tree through pkg-config
      libucx-dev ucx-utils  # ucx transport: libucp.so.0 at run time (its tests), <ucp/api/ucp.h> for ucp_api.hpp's build-time check; ucx_info
      python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pytest  # python/ package + tests
      python3-torch)  # torch 1.13 CPU: the torch.distributed backend's tests (python_torch_backend_*; ~1 min to install)
if [[ "${HETCCL_BENCH_DEPS:-0}" == 1 ]]; then
  pkgs+=(openmpi-bin libopenmpi-dev libgloo-dev pybind11-dev)  # pybind11: python/bench/run_overhead.sh's comparison
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "install-deps: missing packages ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
