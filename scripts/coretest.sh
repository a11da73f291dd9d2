#!/usr/bin/env bash
# Core library tests (`make coretest`, and step 2 of `make test`):
#  1. build/core      Release build, GoogleTest via ctest
#  2. build/core-san  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#  3. build/core-fuzz libFuzzer on the shingler for a few seconds, when clang
#                     is installed (MINHASH_FUZZ_SECONDS, default 20; 0 skips)
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=2
fuzz_seconds=${MINHASH_FUZZ_SECONDS:-20}

run_suite() {
    local dir=$1
    shift
    echo "-- $dir: configure and build"
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$dir" -j"$jobs"
    echo "-- $dir: ctest"
    (cd "$dir" && ctest -j"$jobs" --output-on-failure --timeout 300)
}

run_suite build/core
UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    run_suite build/core-san -DMINHASH_SANITIZE=ON

if [ "$fuzz_seconds" -gt 0 ]; then
    # install-deps.sh installs clang: a missing compiler is a failure, not a skip.
    command -v clang++ >/dev/null || { echo "clang++ is missing: run scripts/install-deps.sh" >&2; exit 1; }
    echo "-- build/core-fuzz: libFuzzer, ${fuzz_seconds}s"
    CXX=clang++ cmake -S . -B build/core-fuzz -DCMAKE_BUILD_TYPE=Release -DMINHASH_TESTS=OFF >/dev/null
    cmake --build build/core-fuzz -j"$jobs" --target fuzz_shingle
    corpus=build/core-fuzz/corpus
    mkdir -p "$corpus"
    # Seeds: the first byte picks unit and k (see the target), the rest is text.
    printf '\x05Ça va? Über-Größe 1859' >"$corpus/seed-words"
    printf '\x01 a b\xffc\xc3 d\t\te' >"$corpus/seed-malformed"
    build/core-fuzz/fuzz_shingle -max_total_time="$fuzz_seconds" -max_len=1024 \
        -artifact_prefix=build/core-fuzz/ -print_final_stats=1 "$corpus" 2>&1 | tail -n 12
    # pipefail makes a crash (non-zero exit of the fuzzer) fail this script.
else
    echo "-- libFuzzer run not requested (MINHASH_FUZZ_SECONDS=0)"
fi
echo "core tests passed"
