# shellcheck shell=bash
# Sourced by the scripts that measure two builds side by side, each in its
# own private PostgreSQL installation and scratch cluster, round by round
# (bench/experiments/compare_builds.sh, bench/experiments/ingest_compare.sh):
#
#   two_builds_args NAME "$@"   BASE, NEW (PG_CONFIG of each), rows, rounds
#                               from the script's arguments (rows and rounds
#                               defaulting to $ROWS_DEFAULT and 3), and a
#                               scratch directory named after the script
#   two_builds_rounds FN OUT    FN base ROUND / FN new ROUND each round, the
#                               order alternating (neither build always goes
#                               first); "round R BUILD k=v ..." lines to OUT and
#                               stdout; a failed measurement stops the script
#   two_builds_medians OUT      each key's median per build and new / base
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh

two_builds_args() {
    local name=$1 usage="usage: $1.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows] [rounds]"
    shift
    # shellcheck disable=SC2034 # for the sourcing script
    BASE=${1:?$usage}
    # shellcheck disable=SC2034
    NEW=${2:?$usage}
    # shellcheck disable=SC2034
    rows=${3:-${ROWS_DEFAULT:?}}
    rounds=${4:-3}
    scratch_dir "$name"
}

two_builds_rounds() {
    local fn=$1 out=$2 r b order res
    for r in $(seq 1 "$rounds"); do
        order="base new"
        [ $((r % 2)) -eq 0 ] && order="new base"
        for b in $order; do
            res=$("$fn" "$b" "$r")
            echo "round $r $b $res" | tee -a "$out"
        done
    done
}

# The median of each key per build, from the "round R BUILD k=v ..." lines.
two_builds_medians() {
    awk '
        { v = $3; n[v]++; for (i = 4; i <= NF; i++) { split($i, kv, "="); val[v, kv[1], n[v]] = kv[2]; keys[kv[1]] = 1 } }
        function median(v, k,    m, i, j, t, a) {
            m = 0; for (i = 1; i <= n[v]; i++) if ((v, k, i) in val) a[++m] = val[v, k, i] + 0
            for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return m == 0 ? "" : (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
        }
        END {
            printf "%-13s %10s %10s %8s\n", "median of", "base", "new", "new/base"
            for (k in keys) { a = median("base", k); b = median("new", k)
                printf "%-13s %10s %10s %8.3f\n", k, a, b, (a > 0 ? b / a : 0) }
        }' "$1"
}
