#!/usr/bin/env bash
# Core library tests (`make coretest`, and step 2 of `make test`):
#  1. build/core      Release build, GoogleTest via ctest (also builds the
#                     benchmark's programs, which bench/run.sh runs from there)
#  2. build/core-san  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#  3. build/core-fuzz libFuzzer on the shingler and on the decoders of the
#                     type's text/binary forms and the lsh page contents,
#                     MINHASH_FUZZ_SECONDS each (default 15; 0 skips)
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=2
fuzz_seconds=${MINHASH_FUZZ_SECONDS:-15}

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
    run_suite build/core-san -DMINHASH_SANITIZE=ON -DMINHASH_BENCH=OFF

if [ "$fuzz_seconds" -gt 0 ]; then
    # install-deps.sh installs clang: a missing compiler is a failure, not a skip.
    command -v clang++ >/dev/null || { echo "clang++ is missing: run scripts/install-deps.sh" >&2; exit 1; }
    echo "-- build/core-fuzz: libFuzzer, ${fuzz_seconds}s per target"
    CXX=clang++ cmake -S . -B build/core-fuzz -DCMAKE_BUILD_TYPE=Release -DMINHASH_TESTS=OFF \
        -DMINHASH_BENCH=OFF >/dev/null
    cmake --build build/core-fuzz -j"$jobs" --target fuzz_shingle fuzz_formats
    corpus=build/core-fuzz/corpus
    mkdir -p "$corpus"
    # Seeds: the first byte picks unit, k and the ignore flags (see the
    # target), the rest is text.
    printf '\x05Ça va? Über-Größe 1859' >"$corpus/seed-words"
    printf '\x01 a b\xffc\xc3 d\t\te' >"$corpus/seed-malformed"
    # Long enough (80 bytes and more) for the word normalizer's ASCII fast path.
    printf '\x0fThe Quick brown fox, caf\xc3\xa9 e\xcc\x81t\xc3\xa9 Stra\xc3\x9fe \xef\xac\x81ve -- jumps over 1234 lazy DOGS; \xf0\x9f\x91\x8d ok \xe6\x9d\xb1\xe4\xba\xac and \xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91\xce\xa3 again\x80 and again.' >"$corpus/seed-long"
    # ignore => punctuation (0x54: words, k = 5), both (0x78), accents in characters (0x2b)
    printf '\x54It'"'"'s a well-known e-mail, don'"'"'t re-send it... (again!) -- U.S.A. rock'"'"'n'"'"'roll \xc2\xbfQu\xc3\xa9? \xe2\x80\x94 ok.' >"$corpus/seed-punct"
    printf '\x78Cr\xc3\xa8me br\xc3\xbbl\xc3\xa9e, L'"'"'\xc3\xa9t\xc3\xa9 \xe2\x80\x94 d\xc3\xa9j\xc3\xa0 \xc2\xabfini\xc2\xbb! \xed\x95\x9c\xea\xb5\xad e\xcc\x81 \xe2\x89\xa0 \xc4\xb0stanbul and the long tail of the text.' >"$corpus/seed-both"
    printf '\x2bCaf\xc3\xa9 cafe\xcc\x81 \xe1\xbe\xaf' >"$corpus/seed-accents"
    build/core-fuzz/fuzz_shingle -max_total_time="$fuzz_seconds" -max_len=1024 \
        -artifact_prefix=build/core-fuzz/ -print_final_stats=1 "$corpus" 2>&1 | tail -n 12
    # Seeds: the first byte picks the decoder (0 text, 1 binary, 2 page content).
    fcorpus=build/core-fuzz/corpus-formats
    mkdir -p "$fcorpus"
    printf '\x00 -7 : [ 1, 4294967295 ,0 ] ' >"$fcorpus/seed-text"
    printf '\x00datasketch:7:[1,2]' >"$fcorpus/seed-text-family"
    printf '\x01\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x05\xff\xff\xff\xff' >"$fcorpus/seed-binary"
    printf '\x02\x2f\x00\x03\x00\x10\x00\x00\x00\x20\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07' >"$fcorpus/seed-page"
    # compact signatures: a width tag in the text, 2-byte values in the binary form
    printf '\x00 oph : bits16 : -7 : [ 1, 65535 ,0 ] ' >"$fcorpus/seed-text-bits"
    printf '\x01\x01\x12\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\x00\x05' >"$fcorpus/seed-binary16"
    build/core-fuzz/fuzz_formats -max_total_time="$fuzz_seconds" -max_len=8300 \
        -artifact_prefix=build/core-fuzz/ -print_final_stats=1 "$fcorpus" 2>&1 | tail -n 12
    # pipefail makes a crash (non-zero exit of the fuzzer) fail this script.
else
    echo "-- libFuzzer run not requested (MINHASH_FUZZ_SECONDS=0)"
fi
echo "core tests passed"
