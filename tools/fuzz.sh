#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/: one per reader of user files) for SECONDS each (default 60),
# built with Clang, AddressSanitizer and UndefinedBehaviorSanitizer in build-sanitized/ (the same build as
# tools/test-sanitized.sh). Seeds come from tests/fuzz/corpus/<target>/; what the fuzzer learns stays in
# build-sanitized/fuzz/<target>/corpus/, and a crashing input is written beside it (crash-*, timeout-*,
# leak-*, oom-*). Exits non-zero if any target found something: turn each finding into a case of
# tests/bad_inputs/ (tests/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(task_vectors layer_list config split_file journal shard_report npy onnx snn_layer energy_table design_report)
bash tools/install-deps.sh clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S . -B build-sanitized -DCMAKE_BUILD_TYPE=Release -DS2_SANITIZE=address,undefined -DS2_FUZZ=ON > /dev/null
cmake --build build-sanitized -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS="detect_stack_use_after_return=0:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=()
for t in "${targets[@]}"; do
  out="build-sanitized/fuzz/$t"
  mkdir -p "$out/corpus"
  echo "fuzz: $t for ${seconds} s"
  if ! "build-sanitized/fuzz_$t" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "tests/fuzz/corpus/$t" > "$out/log.txt" 2>&1; then
    failed+=("$t")
    tail -n 40 "$out/log.txt"
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$out/log.txt" | sed "s/^/  $t: /" || true
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs under build-sanitized/fuzz/<target>/)"
  exit 1
fi
echo "fuzz: no findings in ${#targets[@]} targets, ${seconds} s each"
