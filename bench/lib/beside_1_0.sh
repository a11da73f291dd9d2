# shellcheck shell=bash
# Sourced by the scripts that measure 1.0 against the current tree
# (bench/experiments/compare_1_0.sh, bench/experiments/build_callgrind.sh). Needs root (the clone's
# top directory) and PG_CONFIG set.
#
#   beside_1_0 NAME   a scratch directory ($scratch, removed at exit unless
#                     SCRATCH_KEEP=1) holding 1.0's sources built in
#                     $scratch/v10, and the current tree built; the current
#                     tree's library is installed again at exit, whatever
#                     the script installed last.
#
# 1.0 is commit 14e919a (the v1.0 tag, which clones may lack); V10 overrides it.
V10=${V10:-14e919a37f1f3e5f8b5a76ed1fecc0e75df7b37b}
# shellcheck source=scripts/pgcluster.sh
. "${root:?beside_1_0.sh needs root}/scripts/pgcluster.sh"

beside_1_0() {
    scratch_dir "$1"
    scratch=$SCRATCH
    # shellcheck disable=SC2016 # expanded at exit
    scratch_at_exit 'make -s -C "$root" install >/dev/null'
    git -C "$root" archive "$V10" | tar -x -C "$scratch" --one-top-level=v10
    make -s -C "$scratch/v10" -j2 >/dev/null 2>&1
    make -s -C "$root" -j2 >/dev/null
}

# "1.0=<short hash> current=<short hash>[+changes]" for the reports
versions_line() {
    echo "1.0=$(git -C "$root" rev-parse --short "$V10") current=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo +changes)"
}
