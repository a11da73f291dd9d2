# Signature throughput: SELECT minhash(...) over the corpus in SQL (one
# backend, no parallel workers) beside the same loop in the core library
# alone (bench/core_bench, Google Benchmark), so the database's share shows.

# Runs core_bench once; leaves its CSV in $RESULTS/core_bench.csv.
run_core_bench() {
    MINHASH_BENCH_DOCS=$DATA/docs.tsv MINHASH_BENCH_BASKETS=$DATA/baskets.tsv \
        "$BENCH_BIN/core_bench" --benchmark_min_time="$CORE_MIN_TIME" \
        --benchmark_out="$RESULTS/core_bench.csv" --benchmark_out_format=csv \
        >"$RESULTS/core_bench.txt" 2>&1
}

# "bytes_per_second items_per_second" of one core_bench row.
core_rate() {
    awk -F, -v name="\"$1\"" '$1 == name { print $6, $7 }' "$RESULTS/core_bench.csv"
}

section_throughput() {
    section "signature throughput"
    run_core_bench
    local core_text core_basket core_sh core_perm
    core_text=$(core_rate BM_SignatureText/128)
    core_basket=$(core_rate BM_SignatureBasket/128)
    core_sh=$(core_rate BM_ShingleAndHash)
    core_perm=$(core_rate BM_PermutationMin/128)

    tbl_start "Signature throughput, 128 permutations (per core: rates use CPU seconds)" \
        "workload|rows|MB|SQL wall s|SQL CPU s|SQL MB/s|SQL rows/s|core MB/s|core rows/s|SQL/core"
    if [ "$have_ext" = 1 ] && have_fn minhash; then
        local rows mb rep from r cpu wall
        rows=$(q -c "SELECT count(*) FROM docs")
        mb=$(q -c "SELECT sum(octet_length(body)) / 1e6 FROM docs")
        # Small tables are read several times (a cross join with
        # generate_series) so the statement runs long enough for the
        # backend's CPU clock, which ticks in 10 ms steps.
        rep=$(awk -v mb="$mb" 'BEGIN { r = int(60 / mb) + 1; print (r < 1) ? 1 : r }')
        from="docs"; [ "$rep" -gt 1 ] && from="docs CROSS JOIN generate_series(1, $rep)"
        mb=$(calc "$mb * $rep"); rows=$((rows * rep))
        q -c "SELECT count(octet_length(body)) FROM docs" >/dev/null   # warm the cache
        r=$(best_cpu 3 "SELECT count(minhash(body)) FROM $from"); cpu=${r% *}; wall=${r#* }
        M_SQL_MBPS=$(calc "$mb / $cpu")
        M_SQL_CORE=$(calc "($mb * 1e6 / $cpu) / ${core_text% *}")
        tbl_row "minhash(body) [word, k=5]|$rows|$(fmt %.1f "$mb")|$(fmt %.2f "$wall")|$(fmt %.2f "$cpu")|$(fmt %.1f "$M_SQL_MBPS")|$(fmt %.0f "$(calc "$rows / $cpu")")|$(fmt %.1f "$(calc "${core_text% *} / 1e6")")|$(fmt %.0f "${core_text#* }")|$(fmt %.0f%% "$(calc "$M_SQL_CORE * 100")")"

        r=$(best_cpu 3 "SELECT count(octet_length(body)) FROM $from"); cpu=${r% *}; wall=${r#* }
        tbl_row "same scan without minhash: count(octet_length(body))|$rows|$(fmt %.1f "$mb")|$(fmt %.2f "$wall")|$(fmt %.2f "$cpu")|-|-|-|-|-"

        local brows bmb bfrom="baskets_raw"
        brows=$(q -c "SELECT count(*) FROM baskets_raw")
        bmb=$(q -c "SELECT sum(length(array_to_string(items, ''))) / 1e6 FROM baskets_raw")
        rep=$(awk -v mb="$bmb" 'BEGIN { r = int(20 / mb) + 1; print (r < 1) ? 1 : r }')
        [ "$rep" -gt 1 ] && bfrom="baskets_raw CROSS JOIN generate_series(1, $rep)"
        bmb=$(calc "$bmb * $rep"); brows=$((brows * rep))
        r=$(best_cpu 3 "SELECT count(minhash(items)) FROM $bfrom"); cpu=${r% *}; wall=${r#* }
        tbl_row "minhash(items int[]) [baskets]|$brows|$(fmt %.1f "$bmb")|$(fmt %.2f "$wall")|$(fmt %.2f "$cpu")|$(fmt %.1f "$(calc "$bmb / $cpu")")|$(fmt %.0f "$(calc "$brows / $cpu")")|$(fmt %.1f "$(calc "${core_basket% *} / 1e6")")|$(fmt %.0f "${core_basket#* }")|$(fmt %.0f%% "$(calc "($brows / $cpu) / ${core_basket#* } * 100")")"
    else
        tbl_row "minhash(body) in SQL|-|-|-|-|not available|-|$(fmt %.1f "$(calc "${core_text% *} / 1e6")")|$(fmt %.0f "${core_text#* }")|-"
        tbl_note "not available: SQL function minhash(text) not built"
    fi
    tbl_row "core stage: normalise+shingle+XXH3 only|-|-|-|-|-|-|$(fmt %.1f "$(calc "${core_sh% *} / 1e6")")|$(fmt %.0f "${core_sh#* }")|-"
    tbl_row "core stage: 128 permutation minima only|-|-|-|-|-|-|$(fmt %.1f "$(calc "${core_perm% *} / 1e6")")|$(fmt %.3g "${core_perm#* }") shingles/s|-"
    tbl_note "MB are 10^6 bytes of text (for baskets: of the elements' text forms, which is what is hashed). SQL: one backend, no parallel workers, best of 3, small tables read several times over (rows and MB count every pass). Core: first 20,000 rows of the same corpus (bench/core_bench.cpp), CPU time of the benchmark thread."
    tbl_end
}
