# The issue's targets (stated for 1M rows, 128 permutations, threshold 0.5,
# this 2-core machine) against what this run measured.

target_row() {  # label, target text, measured, op, bound
    tbl_row "$1|$2|${3:--}|$(verdict "$3" "$4" "$5")"
}

section_targets() {
    section "targets"
    tbl_start "Targets ($label run; the targets are stated for 1M rows)" "target|goal|measured|verdict"
    target_row "SQL signatures, MB/s of text per core" ">= 150" "$(fmt %.1f "${M_SQL_MBPS:-}")" ">=" 150
    target_row "SQL rate / standalone core loop" ">= 0.70" "$(fmt %.2f "${M_SQL_CORE:-}")" ">=" 0.70
    target_row "% through the index, p50 ms (t = 0.5)" "<= 0.2" "${R_lsh05_p50:-}" "<=" 0.2
    target_row "% through the index, p99 ms (t = 0.5)" "<= 1" "${R_lsh05_p99:-}" "<=" 1
    target_row "recall on pairs with J >= 0.6 (t = 0.5)" ">= 0.99" "${R_lsh05_recall:-}" ">=" 0.99
    target_row "index build, s" "<= 30" "$(fmt %.2f "${M_BUILD_S:-}")" "<=" 30
    target_row "index size / signature bytes" "<= 1.5" "$(fmt %.2f "${M_SIZE_RATIO:-}")" "<=" 1.5
    local speed="" ok=""
    if [ -n "${R_lsh05_p50:-}" ] && [ -n "${R_gin05_p50:-}" ] && [ "${R_lsh05_p50}" != error ] && [ "${R_gin05_p50}" != error ]; then
        speed=$(calc "$R_gin05_p50 / $R_lsh05_p50")
        ok=$(awk -v a="$R_lsh05_recall" -v b="$R_gin05_recall" 'BEGIN { print (a >= b) ? "recall equal or better" : "recall LOWER" }')
        if [ -n "${R_lsh05_cpu:-}" ] && [ -n "${R_gin05_cpu:-}" ]; then
            tbl_note "By backend CPU time per query (batch of the same queries) GIN-over-bands costs $(fmt %.1f "$(calc "$R_gin05_cpu / $R_lsh05_cpu")")x the lsh index ($(fmt %.3f "$R_gin05_cpu") vs $(fmt %.3f "$R_lsh05_cpu") ms)."
        fi
        if [ -n "${R_floor_p50:-}" ]; then
            tbl_note "Above the floor (query-row lookup alone, p50 $R_floor_p50 ms) the GIN-over-bands p50 is $(fmt %.1f "$(calc "($R_gin05_p50 - $R_floor_p50) / ($R_lsh05_p50 - $R_floor_p50 + 1e-9)")")x the lsh index's."
        fi
    fi
    tbl_row "p50 speed-up over GIN-over-bands, at equal or better recall|>= 5x|$(fmt %.1f "$speed")${ok:+ ($ok)}|$( [ -n "$speed" ] && { [ "$ok" = "recall equal or better" ] && verdict "$speed" ">=" 5 || echo MISS; } || echo "not measured")"
    target_row "all pairs, s" "<= 60" "$(fmt %.2f "${M_PAIRS_S:-}")" "<=" 60
    target_row "all pairs speed-up over the index self-join" ">= 10x" "$(fmt %.1f "${M_PAIRS_SPEEDUP:-}")" ">=" 10
    target_row "all pairs recall on J >= 0.6" ">= 0.99" "${M_PAIRS_RECALL:-}" ">=" 0.99
    [ "$ROWS" -ne 1000000 ] && tbl_note "At $ROWS rows the verdicts are indicative: the targets are for 1M rows."
    tbl_end
}
