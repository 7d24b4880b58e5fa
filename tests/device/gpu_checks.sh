#!/bin/bash
# Issue 13's GPU checks, run by the device tool from the repository root on a machine with an
# NVIDIA GPU, over archives made here by tests/device/pack.sh (carry build-device and .gl).
# The first LABEL's binaries run the tests; every LABEL runs the benchmarks, so two builds
# compare on one card in one call. Logs go to $OUT; a summary is printed last.
# Usage: tests/device/gpu_checks.sh LABEL [LABEL...]; GPU_CHECKS=tests,cli,vulkan,bench,parity
# picks the parts (tests: the CUDA suites; cli: the command-line suites), GPU_BENCHES="MODEL:PRECISION
# ..." the bench-run cases.
set -uo pipefail
out=${OUT:-/tmp/gpu-checks}
mkdir -p "$out"
root=$PWD
checks=${GPU_CHECKS:-tests,cli,vulkan,bench,parity}
# The test binaries name /work/main (their build's source and CLI paths).
[ "$root" = /work/main ] || { mkdir -p /work && ln -sfn "$root" /work/main; }
for label in "$@"; do
    mkdir -p "build-device/$label" && tar -xJf "build-device/$label.tar.xz" -C "build-device/$label"
done
rm -rf build && ln -s "build-device/$1/build" build
export LD_LIBRARY_PATH=$root/build-device/$1/lib
# Vulkan: the image has no loader; Debian's (carried in .gl) finds NVIDIA's ICD.
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
ldconfig
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
log() { echo "== $*" | tee -a "$out/summary.txt"; }
# step NAME LIMIT CMD...: runs CMD into $out/NAME.log, records its status and seconds.
step() {
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    log "$name: rc $rc, $((SECONDS - start)) s"
}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv | tee -a "$out/summary.txt"
if [[ $checks == *tests* ]]; then
    python3 - <<'PY' 2>&1 | tee -a "$out/summary.txt"
import torch
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
a = torch.randn(8192, 8192, dtype=torch.float16, device="cuda"); b = torch.randn_like(a)
def best(f, n=10):
    f(); torch.cuda.synchronize(); s, e = torch.cuda.Event(True), torch.cuda.Event(True); t = []
    for _ in range(n):
        s.record(); f(); e.record(); e.synchronize(); t.append(s.elapsed_time(e) / 1e3)
    return sorted(t)[len(t) // 2]
print(f"torch reference: copy {2 * x.numel() / best(lambda: y.copy_(x)) / 1e9:.0f} GB/s, "
      f"f16 matmul 8192^3 {2 * 8192**3 / best(lambda: a @ b) / 1e12:.0f} TFLOP/s (median of 10)")
PY
    step cuda_device 60 build/tests/engine_test_cuda_device
    step cuda_backend 240 build/tests/engine_test_cuda_backend
fi
if [[ $checks == *cli* ]]; then
    step exit_status 120 build/tests/cli_test_exit_status
    # Every case but the studio's: its binary (Qt's GUI libraries and plugins) is not carried.
    mapfile -t cli_cases < <(build/tests/cli_test_cli -functions | sed 's/()$//' |
        grep -v '^studioAnswersWithoutADisplay$')
    step cli 240 build/tests/cli_test_cli "${cli_cases[@]}"
fi
if [[ $checks == *vulkan* && -f $nvidia_icd ]]; then
    export VK_DRIVER_FILES=$nvidia_icd
    step vk_devices 30 build/app/cli/tmmu devices
    step vk_device 60 build/tests/engine_test_vulkan_device
    step vk_backend 240 build/tests/engine_test_vulkan_backend
    step vk_gpt2_parity 120 build/app/cli/tmmu run --backend vulkan --compare-cpu --decode 64 \
        --prompt 8
    step vk_bench_llama_f16 180 build/app/cli/tmmu bench-run resources/models/tinyllama-1.1b.json \
        --backend vulkan --weight-precision f16
    unset VK_DRIVER_FILES
fi
if [[ $checks == *parity* ]]; then
    step gpt2_check_memory 120 build/app/cli/tmmu run --backend cuda --check-memory --decode 8
    step gpt2_f16_parity 120 build/app/cli/tmmu run --backend cuda --compare-cpu \
        --weight-precision f16 --decode 64 --prompt 8
    # A 16-token prompt: prefill's matrices run on the tensor cores (more than 8 rows).
    step llama_f16_parity 240 build/app/cli/tmmu run resources/models/tinyllama-1.1b.json \
        --backend cuda --compare-cpu --weight-precision f16 --decode 64 --prompt 16
    step llama_f16_counters 120 build/app/cli/tmmu run resources/models/tinyllama-1.1b.json \
        --backend cuda --counters --weight-precision f16 --decode 16 --prompt 8
fi
if [[ $checks == *bench* ]]; then
    for label in "$@"; do
        tmmu=build-device/$label/build/app/cli/tmmu
        for run in ${GPU_BENCHES:-gpt2-small:f32 gpt2-small:f16 tinyllama-1.1b:f32 tinyllama-1.1b:f16}; do
            model=${run%:*} precision=${run#*:}
            LD_LIBRARY_PATH=$root/build-device/$label/lib step \
                "bench_${label}_${model}_$precision" 180 "$tmmu" bench-run \
                "resources/models/$model.json" --backend cuda --weight-precision "$precision"
        done
    done
fi
cd "$out" || exit 1
for f in *.log; do
    case $f in
    bench_* | vk_bench_* | *_counters.log) { echo "-- $f"; cat "$f"; } >>bench.txt ;;
    *) grep -h -E "^(FAIL|SKIP|Totals)|NMSE|argmax|planned|measured" "$f" | sed "s|^|$f: |" >>tests.txt ;;
    esac
done
# At most 8 files come back: the logs go as one archive.
tar -czf logs.tar.gz ./*.log && rm -f ./*.log
cat tests.txt bench.txt summary.txt 2>/dev/null
