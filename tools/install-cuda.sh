#!/usr/bin/env bash
# Installs NVIDIA's pip CUDA 13.0 compiler (matching the GPU machine's driver 580 / CUDA 13.0)
# into .cuda/ at the repository root (git-ignored), so the `cuda` feature of cuzk-gpu builds
# without a system CUDA install. Prints the nvcc path; cuzk-gpu's build.rs finds it there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${CUZK_CUDA_DIR:-$root/.cuda}"
cu13="$dest/nvidia/cu13"
if [ ! -x "$cu13/bin/nvcc" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
    nvidia-cuda-nvcc==13.0.88 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*' \
    'nvidia-cuda-crt==13.0.*' 'nvidia-nvvm==13.0.*' >&2
fi
# nvcc's profile looks under targets/x86_64-linux, which the wheels do not create.
mkdir -p "$cu13/targets/x86_64-linux"
for d in include:include lib:lib lib64:lib; do
  ln -sfn "../../${d#*:}" "$cu13/targets/x86_64-linux/${d%%:*}"
done
echo "$cu13/bin/nvcc"
