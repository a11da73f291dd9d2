# shellcheck shell=bash disable=SC1090,SC1091
# A Citus cluster on loopback for the Citus benchmarks (bench/citus.sh,
# bench/citus_exact.sh). Source after scripts/pgcluster.sh's scratch_dir, with
# PGBIN set:
#
#   citus_cluster WORKERS [postgresql.conf lines...]
#
# starts a coordinator and WORKERS workers (scratch_cluster, so stopped at
# exit) in $SCRATCH/coord, $SCRATCH/worker1..., each with the given settings,
# creates the citus extension on each and adds the workers to the coordinator.
# Defines `on NODE psql-args...`: psql on that node, stopping at the first
# error.

on() { local n=$1; shift; (. "$SCRATCH/$n/env" && "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"); }

citus_cluster() {
    local workers=$1 n i cport
    shift
    local nodes=(coord)
    for i in $(seq 1 "$workers"); do nodes+=("worker$i"); done
    for n in "${nodes[@]}"; do
        scratch_cluster "$n" "$@" >/dev/null
    done
    for n in "${nodes[@]}"; do on "$n" -c "CREATE EXTENSION citus" >/dev/null; done
    cport=$(. "$SCRATCH/coord/env" && echo "$PGPORT")
    on coord -c "SELECT citus_set_coordinator_host('127.0.0.1', $cport)" >/dev/null
    for i in $(seq 1 "$workers"); do
        on coord -c "SELECT citus_add_node('127.0.0.1', $(. "$SCRATCH/worker$i/env" && echo "$PGPORT"))" >/dev/null
    done
}
