#!/usr/bin/env bash
# Signing counted instead of timed: instructions and simulated branch
# mispredictions per byte of text (valgrind cachegrind) of the core loop,
# a base commit against the current tree, on the same documents. On a
# shared machine timed rates swing by 20-40% between runs (bench/
# signing_compare.sh takes medians of rounds); these counts repeat exactly.
#
#   bash bench/experiments/signing_instructions.sh [BASE_REV] [docs] [families]
#
# BASE_REV defaults to HEAD, docs to 1000 (2-4 KB each, minhash-gen docs
# --long), families to "native oph". Each build's sign_count signs the
# documents once and three times; the difference (two passes) divided by
# their bytes leaves out loading the file. valgrind has no AVX-512, so the
# native family runs its AVX2 kernel in both. The checksums of the two
# builds must agree unless the change alters signatures on purpose.
# Needs valgrind (scripts/install-deps.sh valgrind).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
BASE_REV=${1:-HEAD}
docs=${2:-1000}
families=${3:-native oph}
if ! command -v valgrind >/dev/null; then
    echo "bench/experiments/signing_instructions.sh: valgrind is missing (scripts/install-deps.sh valgrind)" >&2
    exit 1
fi
work=$(mktemp -d /tmp/minhash-signcount.XXXXXX)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/base"
git -C "$root" archive "$BASE_REV" | tar -x -C "$work/base"
for b in base new; do
    src=$work/base
    [ "$b" = new ] && src=$root
    if [ ! -f "$src/bench/sign_count.cpp" ]; then  # a base older than the driver
        cp "$root/bench/sign_count.cpp" "$src/bench/"
        printf '\nadd_executable(sign_count bench/sign_count.cpp)\ntarget_include_directories(sign_count PRIVATE bench)\ntarget_link_libraries(sign_count PRIVATE minhash_core)\n' \
            >>"$src/CMakeLists.txt"
    fi
    cmake -S "$src" -B "$work/build-$b" -DCMAKE_BUILD_TYPE=Release -DMINHASH_TESTS=OFF >/dev/null
    cmake --build "$work/build-$b" -j2 --target sign_count minhash-gen >/dev/null
done
"$work/build-new/minhash-gen" docs --long --rows "$docs" --out "$work/docs.tsv" >/dev/null

count() {  # build family repeats -> "instructions mispredictions checksum"
    local out
    out=$(valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=/dev/null \
        "$work/build-$1/sign_count" "$work/docs.tsv" "$docs" "$2" "$3" 2>&1)
    printf '%s %s %s\n' \
        "$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' <<<"$out" | tr -d ,)" \
        "$(sed -n 's/.*Mispredicts: *\([0-9,]*\).*/\1/p' <<<"$out" | tr -d ,)" \
        "$(sed -n 's/.*checksum \([0-9a-f]*\).*/\1/p' <<<"$out")"
}

bytes=$("$work/build-new/sign_count" "$work/docs.tsv" "$docs" native 0 | sed 's/.*documents, \([0-9]*\) bytes.*/\1/')
echo "base=$BASE_REV ($(git -C "$root" rev-parse --short "$BASE_REV")) new=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo +changes) documents=$docs bytes=$bytes"
printf '%-8s %14s %14s %8s %16s %16s %8s  %s\n' family "base instr/B" "new instr/B" new/base \
    "base mispred/B" "new mispred/B" new/base checksums
for f in $families; do
    read -r bi1 bm1 _ < <(count base "$f" 1)
    read -r bi3 bm3 bc < <(count base "$f" 3)
    read -r ni1 nm1 _ < <(count new "$f" 1)
    read -r ni3 nm3 nc < <(count new "$f" 3)
    same=differ
    [ "$bc" = "$nc" ] && same=agree
    awk -v f="$f" -v b="$bytes" -v bi=$((bi3 - bi1)) -v ni=$((ni3 - ni1)) -v bm=$((bm3 - bm1)) \
        -v nm=$((nm3 - nm1)) -v same="$same" 'BEGIN {
        printf "%-8s %14.2f %14.2f %8.3f %16.4f %16.4f %8.3f  %s\n", f, bi / (2 * b), ni / (2 * b),
            ni / bi, bm / (2 * b), nm / (2 * b), nm / bm, same }'
done
