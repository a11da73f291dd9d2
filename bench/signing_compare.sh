#!/usr/bin/env bash
# Signing speed before and after, side by side in one run: a base commit and
# the current tree, each built and installed in a private copy of the
# PostgreSQL installation, each in its own scratch cluster with the same
# 2-4 KB documents stored with lz4 (minhash-gen docs --long), measured round
# by round in alternating order:
#
#   bash bench/signing_compare.sh [BASE_REV] [rows] [rounds]
#
#  - SQL: SELECT count(minhash(body[, family => F])) FROM docs_lz4, the
#    backend's CPU seconds (/proc/self/schedstat, least of 3), per family and per native
#    kernel (avx2, and avx512 where the CPU has it): MB of text per CPU
#    second. The current tree chooses the kernel with SET minhash.simd; a
#    base without that setting runs in two clusters, one started with
#    MINHASH_SIMD=avx2 in its environment, one without (its default, the
#    widest kernel). A base older than the MINHASH_SIMD variable is built
#    with one line of src/core/signature.cpp patched so that its dispatch
#    honours MINHASH_SIMD=avx2 (printed below); nothing else changes.
#  - core: bench/core_bench of each build on the same documents, per
#    kernel (MINHASH_SIMD), the loop without PostgreSQL.
# Ends with the medians over the rounds per family and kernel, new / base,
# and the load average (the machine may be shared: CPU time is what to
# compare). BASE_REV defaults to ec65d28, the commit before the ASCII fast
# path, oph in SQL and compact signatures; rows to 10000, rounds to 3.
# MINHASH_SIGNING_DOCS=FILE.tsv takes the documents from FILE (the first
# rows of it; bench/real_text_docs.py writes such a file of English prose)
# instead of minhash-gen's synthetic ones.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BASE_REV=${1:-ec65d28}
rows=${2:-10000}
rounds=${3:-3}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir signing
base_src=$SCRATCH/base
mkdir -p "$base_src"

# --- builds ---------------------------------------------------------------
git -C "$root" archive "$BASE_REV" | tar -x -C "$base_src"
if [ ! -f "$base_src/src/core/signature_dispatch.cpp" ]; then
    # The base picks its kernel from the CPU alone: let MINHASH_SIMD=avx2 cap it.
    sed -i 's|^    if (detail::cpu_has_avx512())$|    if (detail::cpu_has_avx512() \&\& !(std::getenv("MINHASH_SIMD") \&\& std::string_view(std::getenv("MINHASH_SIMD")) == "avx2"))|' \
        "$base_src/src/core/signature.cpp"
    grep -q 'getenv("MINHASH_SIMD")' "$base_src/src/core/signature.cpp" \
        || { echo "signing_compare.sh: cannot patch the base's kernel choice" >&2; exit 1; }
    sed -i 's|#include <algorithm>|#include <algorithm>\n#include <cstdlib>\n#include <string_view>|' "$base_src/src/core/signature.cpp"
    echo "base patched: $(grep -n 'getenv("MINHASH_SIMD")' "$base_src/src/core/signature.cpp")"
fi
echo "building base $BASE_REV and the current tree ..."
make -s -C "$base_src" -j2 >/dev/null 2>&1 || { make -C "$base_src" -j2 >&2; exit 1; }
make -s -C "$root" -j2 >/dev/null
for b in base new; do
    src=$base_src; [ "$b" = new ] && src=$root
    cmake -S "$src" -B "$SCRATCH/core-$b" -DCMAKE_BUILD_TYPE=Release -DMINHASH_TESTS=OFF >/dev/null
    cmake --build "$SCRATCH/core-$b" -j2 --target core_bench minhash-gen >/dev/null
done

# A private copy of the installation with one build of minhash in it: bin
# and share copied, the library directory linked entry by entry (but
# minhash.so), all at the same places relative to their common prefix, as
# PostgreSQL finds its files relative to its binaries (tests/t/MinhashTAP.pm
# private_installation does the same).
private_install() {  # name source_tree -> prints its pg_config
    local name=$1 src=$2 bindir pkglib share prefix dest f
    bindir=$("$PG_CONFIG" --bindir)
    pkglib=$("$PG_CONFIG" --pkglibdir)
    share=$("$PG_CONFIG" --sharedir)
    prefix=$bindir
    while [ "${pkglib#"$prefix"/}" = "$pkglib" ] || [ "${share#"$prefix"/}" = "$share" ]; do
        prefix=$(dirname "$prefix")
    done
    dest=$SCRATCH/inst-$name
    mkdir -p "$dest${bindir#"$prefix"}" "$dest${pkglib#"$prefix"}" "$(dirname "$dest${share#"$prefix"}")"
    cp -a "$bindir/." "$dest${bindir#"$prefix"}/"
    cp -a "$share" "$dest${share#"$prefix"}"
    for f in "$pkglib"/*; do
        [ "$(basename "$f")" = minhash.so ] || ln -s "$f" "$dest${pkglib#"$prefix"}/$(basename "$f")"
    done
    rm -f "$dest${share#"$prefix"}/extension"/minhash*
    cp "$src/minhash.so" "$dest${pkglib#"$prefix"}/"
    cp "$src/minhash.control" "$src"/minhash--*.sql "$dest${share#"$prefix"}/extension/"
    echo "$dest${bindir#"$prefix"}/pg_config"
}
BASE_CONFIG=$(private_install base "$base_src")
NEW_CONFIG=$(private_install new "$root")
chmod -R a+rX "$SCRATCH"

# --- data -----------------------------------------------------------------
docs=$SCRATCH/docs.tsv
if [ -n "${MINHASH_SIGNING_DOCS:-}" ]; then
    # documents of real text (bench/real_text_docs.py), the first rows of them
    head -n "$rows" "$MINHASH_SIGNING_DOCS" > "$docs"
    rows=$(wc -l < "$docs")
else
    "$SCRATCH/core-new/minhash-gen" docs --long --rows "$rows" --out "$docs" >/dev/null
fi
chmod a+r "$docs"
load() {
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION minhash;
CREATE TABLE docs_lz4 (id int, cluster int, body text COMPRESSION lz4);
\copy docs_lz4 FROM '$docs'
VACUUM ANALYZE docs_lz4;
SQL
}
conf=("shared_buffers = 512MB" "jit = off" "autovacuum = off" "max_parallel_workers_per_gather = 0")
MINHASH_SIMD=avx2 PG_CONFIG=$BASE_CONFIG scratch_cluster base-avx2 "${conf[@]}" >/dev/null
load
PG_CONFIG=$BASE_CONFIG scratch_cluster base-auto "${conf[@]}" >/dev/null
load
PG_CONFIG=$NEW_CONFIG scratch_cluster new "${conf[@]}" >/dev/null
load
mb=$(psql -X -qtA -c "SELECT sum(octet_length(body)) / 1e6 FROM docs_lz4")
kernels="avx2"
if psql -X -qtA -c "SET minhash.simd = avx512" >/dev/null 2>&1; then kernels="avx2 avx512"; fi
base_has_oph=0
. "$SCRATCH/base-auto/env"
psql -X -qtA -c "SELECT 'oph'::minhash_family" >/dev/null 2>&1 && base_has_oph=1

# "cpu_s" of one statement in a session of the current cluster (the setup
# statement first, outside the measurement): the least of three runs, the
# one the machine's other load disturbed least
cpu_of() {  # setup sql
    local i
    for i in 1 2 3; do
        psql -X -q -tA -v ON_ERROR_STOP=1 -c "$1" -c "SELECT pg_read_file('/proc/self/schedstat')" \
            -c "$2" -c "SELECT pg_read_file('/proc/self/schedstat')" |
            awk '/^[0-9]+ [0-9]+ [0-9]+$/ { n++; c[n] = $1 / 1e9 } END { printf "%.4f\n", c[n] - c[1] }'
    done | sort -n | head -n 1
}

# One round: every (build, kernel, family) once, the builds in the round's order.
measure() {  # build round
    local b=$1 k f env setup sql fam_arg out=""
    for k in $kernels; do
        if [ "$b" = base ]; then
            env=$SCRATCH/base-auto/env; [ "$k" = avx2 ] && env=$SCRATCH/base-avx2/env
            setup="SELECT 1"
        else
            env=$SCRATCH/new/env
            setup="SET minhash.simd = $k"
        fi
        # shellcheck disable=SC1090
        . "$env"
        psql -X -qtA -c "SELECT count(length(body)) FROM docs_lz4" >/dev/null   # warm
        for f in native datasketch oph; do
            [ "$b" = base ] && [ "$f" = oph ] && [ "$base_has_oph" = 0 ] && continue
            fam_arg=""; [ "$f" != native ] && fam_arg=", family => '$f'"
            sql="SELECT count(minhash(body$fam_arg)) FROM docs_lz4"
            out+=" sql_${f}_$k=$(cpu_of "$setup" "$sql")"
        done
        out+=" detoast_$k=$(cpu_of "$setup" "SELECT count(length(body)) FROM docs_lz4")"
    done
    echo "$out"
}

core_rates() {  # build -> "core_<family>_<kernel>=MB/s ..."
    local b=$1 k out=""
    for k in $kernels; do
        MINHASH_SIMD=$k MINHASH_BENCH_DOCS=$docs MINHASH_BENCH_ROWS=$rows "$SCRATCH/core-$b/core_bench" \
            --benchmark_filter='BM_SignatureText/128|BM_DatasketchText/128|BM_OphText/128' \
            --benchmark_min_time=0.5 --benchmark_format=csv 2>/dev/null |
            awk -F, -v k="$k" '
                $1 == "\"BM_SignatureText/128\"" { printf " core_native_%s=%.1f", k, $6 / 1e6 }
                $1 == "\"BM_DatasketchText/128\"" { printf " core_datasketch_%s=%.1f", k, $6 / 1e6 }
                $1 == "\"BM_OphText/128\"" { printf " core_oph_%s=%.1f", k, $6 / 1e6 }' > "$SCRATCH/core-$b-$k.txt"
        out+=$(cat "$SCRATCH/core-$b-$k.txt")
    done
    echo "$out"
}

echo "base=$BASE_REV ($(git -C "$root" rev-parse --short "$BASE_REV")) new=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo +changes)" \
     "rows=$rows MB=$(printf %.1f "$mb") rounds=$rounds kernels=[$kernels]"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$SCRATCH/rounds.txt
for r in $(seq 1 "$rounds"); do
    order="base new"; [ $((r % 2)) -eq 0 ] && order="new base"
    for b in $order; do
        res="$(measure "$b")$(core_rates "$b")"
        echo "round $r $b$res" | tee -a "$out"
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# Medians per key and build; SQL CPU seconds become MB/s per core.
awk -v mb="$mb" '
    { b = $3; n[b]++; for (i = 4; i <= NF; i++) { split($i, kv, "="); v[b, kv[1], n[b]] = kv[2]; keys[kv[1]] = 1 } }
    function median(b, k,    m, i, j, t, a) {
        m = 0; for (i = 1; i <= n[b]; i++) if ((b, k, i) in v) a[++m] = v[b, k, i] + 0
        for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return m == 0 ? "" : (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
    }
    function rate(b, k,    c) { c = median(b, k); return c == "" ? "" : mb / c }
    END {
        printf "%-11s %-7s %14s %14s %9s %14s %14s %9s\n", "family", "kernel", "base SQL MB/s", "new SQL MB/s", "new/base", "base core MB/s", "new core MB/s", "new/base"
        split("native datasketch oph", fams, " ")
        split("avx2 avx512", kers, " ")
        for (fi = 1; fi <= 3; fi++) for (ki = 1; ki <= 2; ki++) {
            f = fams[fi]; k = kers[ki]
            if (!(("sql_" f "_" k) in keys)) continue
            bs = rate("base", "sql_" f "_" k); ns = rate("new", "sql_" f "_" k)
            bc = median("base", "core_" f "_" k); nc = median("new", "core_" f "_" k)
            printf "%-11s %-7s %14s %14s %9s %14s %14s %9s\n", f, k,
                bs == "" ? "-" : sprintf("%.1f", bs), ns == "" ? "-" : sprintf("%.1f", ns),
                (bs == "" || ns == "") ? "-" : sprintf("%.2f", ns / bs),
                bc == "" ? "-" : sprintf("%.1f", bc), nc == "" ? "-" : sprintf("%.1f", nc),
                (bc == "" || nc == "") ? "-" : sprintf("%.2f", nc / bc)
        }
        for (ki = 1; ki <= 2; ki++) {
            k = kers[ki]
            if (!(("detoast_" k) in keys)) continue
            printf "detoast only (count(length(body))), %s: base %.1f MB/s, new %.1f MB/s\n", k, rate("base", "detoast_" k), rate("new", "detoast_" k)
        }
    }' "$out"
