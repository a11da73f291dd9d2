# Signatures on real-length text (issue 13): documents of 2-4 KB
# (minhash-gen docs --long), which PostgreSQL compresses and often stores out
# of line, loaded three times: compressed with pglz (the default), with lz4,
# and uncompressed out of line (STORAGE EXTERNAL, the cost of TOAST without
# decompression). For each: how the values are stored, SELECT minhash(body)
# in MB of text per CPU second of the backend, a scan that only detoasts,
# and the core loop (bench/core_bench) on the same documents.
# Run by bench/run.sh --scale 10k-long|100k-long|1m-long.

# Loads $DATA/docs.tsv into docs_pglz, docs_lz4 and docs_ext.
load_toast() {
    section "load (long documents)"
    local t
    for t in pglz lz4 ext; do
        local col="body text COMPRESSION pglz"
        [ "$t" = lz4 ] && col="body text COMPRESSION lz4"
        psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE docs_$t (id int, cluster int, $col);
$( [ "$t" = ext ] && echo "ALTER TABLE docs_$t ALTER COLUMN body SET STORAGE EXTERNAL;" )
\copy docs_$t FROM '$DATA/docs.tsv'
VACUUM ANALYZE docs_$t;
SQL
    done
}

# "rows compressed_pct out_of_line_pct stored_MB" of one table. Out of line:
# the distinct values in its TOAST table (PostgreSQL 15 has no per-row
# function for that); compressed: pg_column_compression.
toast_storage() {
    local t=$1 toast
    toast=$(q -c "SELECT reltoastrelid::regclass FROM pg_class WHERE relname = '$t'")
    q -F' ' -c "SELECT count(*),
                       100.0 * count(pg_column_compression(body)) / count(*),
                       100.0 * (SELECT count(DISTINCT chunk_id) FROM $toast) / count(*),
                       pg_total_relation_size('$t') / 1e6
                FROM $t"
}

section_toast() {
    section "signatures on TOASTed documents"
    if [ "$have_ext" != 1 ] || ! have_fn minhash; then
        not_available "SQL function minhash(text)"
        return
    fi
    MINHASH_BENCH_DOCS=$DATA/docs.tsv MINHASH_BENCH_ROWS=${CORE_ROWS:-20000} "$BENCH_BIN/core_bench" \
        --benchmark_filter='BM_SignatureText/128|BM_ShingleAndHash|BM_PermutationMin/128' \
        --benchmark_min_time="$CORE_MIN_TIME" \
        --benchmark_out="$RESULTS/core_bench.csv" --benchmark_out_format=csv \
        >"$RESULTS/core_bench.txt" 2>&1
    local core_text core_sh core_perm
    core_text=$(core_rate BM_SignatureText/128)
    core_sh=$(core_rate BM_ShingleAndHash)
    core_perm=$(core_rate BM_PermutationMin/128)

    local mb sizes
    mb=$(q -c "SELECT sum(octet_length(body)) / 1e6 FROM docs_pglz")
    sizes=$(q -c "SELECT format('%s / %s / %s / %s', min(n), percentile_disc(0.5) WITHIN GROUP (ORDER BY n), round(avg(n)), max(n))
                  FROM (SELECT octet_length(body) AS n FROM docs_pglz) s")
    tbl_start "Signatures on TOASTed documents, 128 permutations (per core: rates use the backend's CPU seconds)" \
        "table|storage|rows|compressed|out of line|table MB|detoast-only CPU s|minhash CPU s|minhash wall s|MB/s per core|core MB/s|SQL/core"
    local t r rows comp ext stored cpu wall dcpu rate
    for t in pglz lz4 ext; do
        r=$(toast_storage "docs_$t")
        read -r rows comp ext stored <<<"$r"
        q -c "SELECT count(length(body)) FROM docs_$t" >/dev/null   # warm the cache
        # Detoast (fetch and decompress) and count characters: the scan's
        # cost without signatures.
        r=$(best_cpu 3 "SELECT count(length(body)) FROM docs_$t"); dcpu=${r% *}
        r=$(best_cpu 3 "SELECT count(minhash(body)) FROM docs_$t"); cpu=${r% *}; wall=${r#* }
        rate=$(calc "$mb / $cpu")
        eval "M_TOAST_${t}=\$rate"
        local what
        case $t in
        pglz) what="COMPRESSION pglz (the default)" ;;
        lz4) what="COMPRESSION lz4" ;;
        ext) what="STORAGE EXTERNAL (no compression)" ;;
        esac
        tbl_row "docs_$t|$what|$rows|$(fmt %.0f%% "$comp")|$(fmt %.0f%% "$ext")|$(fmt %.0f "$stored")|$(fmt %.2f "$dcpu")|$(fmt %.2f "$cpu")|$(fmt %.2f "$wall")|$(fmt %.1f "$rate")|$(fmt %.1f "$(calc "${core_text% *} / 1e6")")|$(fmt %.0f%% "$(calc "$rate * 1e6 / ${core_text% *} * 100")")"
    done
    tbl_row "core stage: normalise+shingle+XXH3 only|-|-|-|-|-|-|-|-|-|$(fmt %.1f "$(calc "${core_sh% *} / 1e6")")|-"
    tbl_row "core stage: 128 permutation minima only|-|-|-|-|-|-|-|-|-|$(fmt %.1f "$(calc "${core_perm% *} / 1e6")")|-"
    tbl_note "$(fmt %.1f "$mb") MB of text (octet_length, uncompressed); document bytes min / median / mean / max: $sizes. Detoast-only: SELECT count(length(body)), which fetches and decompresses every value and counts its characters. minhash: SELECT count(minhash(body)) (word shingles, k = 5, 128 permutations), best of 3 by CPU time; MB/s per core = MB of text / backend CPU seconds. Core: bench/core_bench on the first ${CORE_ROWS:-20000} documents of the same file."
    tbl_end
    local target_row_lz4
    target_row_lz4=$(fmt %.1f "${M_TOAST_lz4:-}")
    tbl_start "Target: SELECT minhash(body) on 2-4 KB documents with lz4" "target|goal|measured|verdict"
    tbl_row "MB/s of text per core, lz4|>= 150|$target_row_lz4|$(verdict "$target_row_lz4" ">=" 150)"
    tbl_end

    toast_families

    [ "$profile" = 1 ] && toast_profiles
    return 0
}

# Where the backend's time goes in SELECT minhash(body), by stage: perf's
# self time per symbol, summed over symbol patterns. The core's shingling,
# hashing and minima are one inlined function in the extension
# (signature_of_text); core_bench's stage rows split it.
toast_stage_profile() {  # table
    local t=$1 data out pid
    command -v perf >/dev/null || return 0
    data=$RESULTS/perf-toast-$t.data
    out=$(perf record -q -F 1999 -a -o "$data" -- \
        psql -X -q -tA -c "SELECT pg_backend_pid()" -c "SELECT count(minhash(body)) FROM docs_$t" 2>/dev/null) || return 0
    pid=$(echo "$out" | head -n 1)
    perf report -i "$data" --pid "$pid" --stdio --no-children --sort dso,symbol \
        --percentage relative 2>/dev/null | grep -vE '^#|^$' >"$RESULTS/perf-toast-$t.txt"
    awk '
        { pct = $1; sub(/%/, "", pct); line = $0 }
        line ~ /pglz_decompress/ { s["decompression (pglz)"] += pct; next }
        line ~ /LZ4_|liblz4/ { s["decompression (lz4)"] += pct; next }
        line ~ /toast_|detoast|heap_fetch|heapam_index_fetch|_bt_|index_getnext|index_fetch|systable_|ReadBuffer|LockBuffer|hash_search|PinBuffer|UnpinBuffer|heap_hot_search|BufTableLookup|index_beginscan|index_endscan|index_rescan|btgettuple|btbeginscan|btrescan|btendscan|LWLock|heap_copytuple|RelationGetBufferForTuple|ResourceOwner|table_open|relation_open|relation_close|index_open|index_close|LockRelation|LockAcquire|LockRelease|Lock/ { s["TOAST fetch (index scan of the TOAST table, buffers, locks)"] += pct; next }
        line ~ /signature_of_text|normalize_into|copy_ascii_token|skip_ascii|XXH|SignatureSink/ { s["core: normalise + shingle hashes (inlined)"] += pct; next }
        line ~ /classify_non_ascii|libunistring|u8_|uc_/ { s["core: non-ASCII case folding (libunistring)"] += pct; next }
        line ~ /signature_update|update_block|update8/ { s["core: 128 minima"] += pct; next }
        line ~ /memcpy|memmove|__memset|malloc|free|_int_malloc|_int_free|operator new|operator delete|palloc|pfree|AllocSet|MemoryContext/ { s["memory: copies, allocation"] += pct; next }
        line ~ /minhash\.so/ { s["extension glue (other minhash.so)"] += pct; next }
        line ~ /heap|slot_|ExecScan|ExecAgg|ExecInterpExpr|advance_|SeqNext|tts_|heapgettup|ExecStore|fetch_input/ { s["executor: scan and aggregate"] += pct; next }
        { s["other"] += pct }
        END { for (k in s) printf "%s|%.1f%%\n", k, s[k] }' "$RESULTS/perf-toast-$t.txt" | sort -t'|' -k2 -rn
    rm -f "$data" "$data.old"
}

toast_profiles() {
    section "profile (TOASTed documents)"
    if ! command -v perf >/dev/null; then
        not_available "perf (linux-perf)"
        return
    fi
    local t
    for t in pglz lz4 ext; do
        tbl_start "Profile by stage: SELECT count(minhash(body)) FROM docs_$t (share of the backend's samples)" "stage|share"
        while IFS= read -r line; do tbl_row "$line"; done < <(toast_stage_profile "$t")
        tbl_note "perf record -F 1999 -a, samples of this backend only; symbols in bench/results/$label/perf-toast-$t.txt."
        tbl_end
    done
}

# Signing speed by hash family and SIMD kernel on the lz4 table: the SQL
# statement per family with minhash.simd forced to each kernel the CPU runs
# (the native family's minima; the others have no SIMD kernel and show the
# setting makes no difference), beside the core loop (core_bench with
# MINHASH_SIMD) on the same documents. At most FAMILY_ROWS (20,000) rows:
# datasketch signs at about 20 MB/s.
toast_families() {
    if ! q -c "SELECT 'oph'::minhash_family" >/dev/null 2>&1; then
        not_available "family => 'oph' and minhash.simd (signing by family and kernel)"
        return 0
    fi
    local n=${FAMILY_ROWS:-20000} kernels="avx2" k f mb rows r cpu rate core label
    q -c "SET minhash.simd = avx512" >/dev/null 2>&1 && kernels="avx2 avx512"
    mb=$(q -c "SELECT sum(octet_length(body)) / 1e6 FROM docs_lz4 WHERE id <= $n")
    rows=$(q -c "SELECT count(*) FROM docs_lz4 WHERE id <= $n")
    for k in $kernels; do
        MINHASH_SIMD=$k MINHASH_BENCH_DOCS=$DATA/docs.tsv MINHASH_BENCH_ROWS=$n "$BENCH_BIN/core_bench" \
            --benchmark_filter='BM_SignatureText/128|BM_DatasketchText/128|BM_OphText/128' \
            --benchmark_min_time="$CORE_MIN_TIME" \
            --benchmark_out="$RESULTS/core_bench_$k.csv" --benchmark_out_format=csv \
            >"$RESULTS/core_bench_$k.txt" 2>&1
    done
    tbl_start "Signing speed by family and kernel: SELECT count(minhash(body, family => F)) on docs_lz4, 128 values (per core: the backend's CPU seconds)" \
        "family|kernel|rows|MB|SQL CPU s|SQL MB/s per core|core MB/s|SQL/core"
    for f in native datasketch oph; do
        for k in $kernels; do
            r=$(best_cpu 3 "SET minhash.simd = $k; SELECT count(minhash(body, family => '$f')) FROM docs_lz4 WHERE id <= $n")
            cpu=${r% *}
            rate=$(calc "$mb / $cpu")
            case $f in
            native) label=BM_SignatureText/128 ;;
            datasketch) label=BM_DatasketchText/128 ;;
            oph) label=BM_OphText/128 ;;
            esac
            core=$(awk -F, -v name="\"$label\"" '$1 == name { print $6 }' "$RESULTS/core_bench_$k.csv")
            eval "M_FAM_${f}_${k}=\$rate"
            tbl_row "$f|$k|$rows|$(fmt %.1f "$mb")|$(fmt %.2f "$cpu")|$(fmt %.1f "$rate")|$(fmt %.1f "$(calc "${core:-0} / 1e6")")|$(fmt %.0f%% "$(calc "$rate * 1e6 / ${core:-1} * 100")")"
        done
    done
    tbl_note "SQL: best of 3 by the backend's CPU time (SET minhash.simd = KERNEL first; only the native family's minima have SIMD kernels, and every kernel computes the same signatures). Core: bench/core_bench with MINHASH_SIMD=KERNEL on the same first $n documents. $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)."
    tbl_end
    local nat fast
    nat=$(fmt %.1f "${M_FAM_native_avx2:-}")
    fast=$(awk -v a="${M_FAM_native_avx2:-0}" -v b="${M_FAM_oph_avx2:-0}" 'BEGIN { printf "%.1f", (a > b) ? a : b }')
    tbl_start "Targets: signing on 2-4 KB lz4 documents with the AVX2 kernel (minhash.simd = avx2)" "target|goal|measured|verdict"
    tbl_row "native family, MB/s per core|>= 200|$nat|$(verdict "$nat" ">=" 200)"
    tbl_row "fastest family (oph), MB/s per core|>= 300|$fast|$(verdict "$fast" ">=" 300)"
    tbl_end
}
