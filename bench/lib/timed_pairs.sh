# shellcheck shell=bash
# Sourced by the all-pairs benchmarks (parallel_pairs.sh, bench/experiments/pairs_table_order.sh,
# pairs_cold.sh):
#
#   timed_count PID QUERY [SQL...]   "wall s | CPU s | rows" of SELECT count(*) FROM QUERY,
#                                    after the SQL statements (SETs), in one psql session
#                                    of the cluster of PGHOST/PGPORT; CPU is what the
#                                    postmaster PID reaped from its children (the
#                                    backend and any parallel workers)
#   drop_page_cache DIR              every file under DIR written back and dropped from
#                                    the kernel's page cache, so the next reads go to disk

# the postmaster's reaped children's CPU, in clock ticks (fields 16, 17 of /proc/PID/stat)
_children_cpu() { awk '{ print $16 + $17 }' "/proc/$1/stat"; }

timed_count() {
    local pm=$1 query=$2 c0 c1 out ms n
    shift 2
    local sets=()
    for s in "$@"; do sets+=(-c "$s"); done
    c0=$(_children_cpu "$pm")
    out=$(psql -X -q -v ON_ERROR_STOP=1 "${sets[@]}" -c '\timing on' -c "SELECT count(*) FROM $query")
    sleep 1   # the backend reaped
    c1=$(_children_cpu "$pm")
    ms=$(awk '/^Time: / { t = $2 } END { print t }' <<<"$out")
    n=$(awk 'NR == 3 { print $1 }' <<<"$out")
    awk -v ms="$ms" -v c="$((c1 - c0))" -v t="$(getconf CLK_TCK)" -v n="$n" \
        'BEGIN { printf "%.2f | %.2f | %s\n", ms / 1000, c / t, n }'
}

drop_page_cache() {
    python3 - "$1" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.fsync(fd)  # fsync = off in scratch clusters: written pages may be dirty
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}
