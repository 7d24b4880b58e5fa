#!/bin/bash
# Packs what the GPU checks need for the device tool (../.library/device), which carries only
# the working tree: stripped binaries at their build paths plus the shared libraries they load
# (Debian's Qt, fmt, SQLite, ONNX, protobuf, ICU...) that a bare CUDA image lacks, as one
# archive build-device/LABEL.tar.xz (ignored by git; name build-device in `carry`).
# tests/device/gpu_checks.sh unpacks it there. Usage: tests/device/pack.sh [BUILD_DIR] [LABEL]
set -euo pipefail
build=${1:-build}
label=${2:-current}
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bins=(app/cli/tmmu)
for t in engine_test_cuda_backend engine_test_cuda_device engine_test_vulkan_backend \
         engine_test_vulkan_device cli_test_cli cli_test_exit_status; do
    [ -x "$build/tests/$t" ] && bins+=("tests/$t")
done
mkdir -p "$stage/lib"
for b in "${bins[@]}"; do
    mkdir -p "$stage/build/$(dirname "$b")"
    strip -o "$stage/build/$b" "$build/$b"
    # The C and C++ runtimes stay the image's own (newer); everything else travels.
    ldd "$build/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
        grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
        xargs -r cp -L -n -t "$stage/lib"
done
mkdir -p "$root/build-device"
tar -C "$stage" -cJf "$root/build-device/$label.tar.xz" .
du -h "$root/build-device/$label.tar.xz"
