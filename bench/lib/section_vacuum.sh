# VACUUM after deleting 10% of the rows (issue 13, the 10m scale; any scale
# with --sections "... vacuum"): DELETE time, VACUUM time (wall and backend
# CPU), the lsh index's size before and after, and one % query batch after
# it, whose recall must not drop (deleted rows are not counted as missed).
# Runs last: the table keeps only 90% of its rows afterwards.

section_vacuum() {
    section "vacuum"
    if [ "${LSH_INDEX:-0}" != 1 ]; then
        not_available "lsh index (vacuum needs it)"
        return
    fi
    local before after del vac ndel
    before=$(q -c "SELECT pg_relation_size('docs_sig_lsh')")
    tbl_start "VACUUM after deleting 10% of the rows (id % 10 = 0; $ROWS rows)" "step|wall s|backend CPU s|lsh index size MB|notes"
    tbl_row "before|-|-|$(fmt %.1f "$(calc "$before / 1048576")")|"
    del=$(sql_cpu "DELETE FROM docs WHERE id % 10 = 0")
    ndel=$(q -c "SELECT $ROWS - count(*) FROM docs")
    tbl_row "DELETE FROM docs WHERE id % 10 = 0|$(fmt %.1f "${del#* }")|$(fmt %.1f "${del% *}")|-|$ndel rows"
    vac=$(PGAPPNAME=bench_vacuum sql_cpu "VACUUM docs")
    after=$(q -c "SELECT pg_relation_size('docs_sig_lsh')")
    tbl_row "VACUUM docs|$(fmt %.1f "${vac#* }")|$(fmt %.1f "${vac% *}")|$(fmt %.1f "$(calc "$after / 1048576")")|heap and every index (the primary key's too), one process"
    # The same recall batch as the queries section, on the queries whose row survived.
    local r
    r=$(PGOPTIONS="-c minhash.similarity_threshold=0.5" sql_cpu "CREATE TABLE res_after_vacuum AS SELECT q.qid, q.id AS qrow, d.id
        FROM queries q CROSS JOIN LATERAL (SELECT id FROM docs WHERE sig % q.sig) d WHERE q.qid <= $NREC")
    local score
    score=$(q -F'|' -c "
      WITH rel AS (SELECT qu.qid, t.o AS id FROM queries qu JOIN truth_sym t ON t.q = qu.id
                   JOIN docs live ON live.id = t.o
                   WHERE t.j >= 0.6 AND qu.qid <= $NREC)
      SELECT round((SELECT count(*) FROM rel JOIN res_after_vacuum USING (qid, id))::numeric / nullif((SELECT count(*) FROM rel), 0), 4),
             (SELECT count(*) FROM res_after_vacuum r WHERE r.id % 10 = 0)")
    tbl_row "% at t = 0.5 after the VACUUM, $NREC queries in one statement|$(fmt %.1f "${r#* }")|$(fmt %.1f "${r% *}")|-|recall J>=0.6 over live rows: ${score%|*}; deleted rows returned: ${score#*|}"
    tbl_end
}
