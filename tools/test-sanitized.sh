#!/usr/bin/env bash
# Builds everything (the verilated RTL included) with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer into build-sanitized/ and runs the whole test suite there; any sanitizer report
# fails the run. Clang, not GCC: GCC 12's ASan runtime reports a false stack overflow in its sigaltstack
# interceptor when an exception is thrown after SystemC has switched thread stacks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S . -B build-sanitized -DCMAKE_BUILD_TYPE=Release -DS2_SANITIZE=address,undefined -DS2_FUZZ=ON > /dev/null
cmake --build build-sanitized -j "$(nproc)"
# SystemC switches thread stacks, which ASan's stack-use-after-return check cannot follow
export ASAN_OPTIONS="detect_stack_use_after_return=0:detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# the Yosys synthesis tests (label synth) run no C++: tools/test.sh runs them once
ctest --test-dir build-sanitized --output-on-failure -j "$(nproc)" -LE synth
