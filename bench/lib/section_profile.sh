# Where the time goes (run.sh --profile): perf samples of the backend while
# it runs the signature scan and a batch of index queries, top symbols.
# perf records system-wide (the backend is started by the statement itself),
# and the report keeps only that backend's pid.

profile_statement() {  # title, SQL
    local data=$RESULTS/perf-$RANDOM.data out pid
    out=$(perf record -q -F 1999 -g -a -o "$data" -- \
        psql -X -q -tA -c "SELECT pg_backend_pid()" -c "$2" 2>/dev/null) || return 0
    pid=$(echo "$out" | head -n 1)
    {
        echo
        echo "#### Profile: $1"
        echo
        echo '```'
        echo "$2"
        echo
        perf report -i "$data" --pid "$pid" --stdio --no-children --sort dso,symbol -g none \
            --percentage relative --percent-limit 1 2>/dev/null | grep -vE '^#|^$' | sed 's/[ -]*$//' | head -n 25
        echo '```'
    } | tee -a "$RESULTS/report.md"
    rm -f "$data" "$data.old"
}

section_profile() {
    section "profile"
    if ! command -v perf >/dev/null; then
        not_available "perf (linux-perf)"
        return
    fi
    if [ "$have_ext" = 1 ] && have_fn minhash; then
        local rep=$(( 200000 / ROWS > 1 ? 200000 / ROWS : 1 ))
        profile_statement "SELECT minhash(body) over the table" \
            "SELECT count(minhash(body)) FROM docs CROSS JOIN generate_series(1, $rep)"
    fi
    if [ "${LSH_INDEX:-0}" = 1 ]; then
        profile_statement "% through the lsh index, $NQ queries in one statement" \
            "SELECT count(*) FROM queries q CROSS JOIN LATERAL (SELECT id FROM docs WHERE sig % q.sig) d"
    fi
}
