#!/usr/bin/env bash
# `make test-matrix`: the extension on other PostgreSQL majors, each in a
# Debian chroot that has the distribution's own packages of that major.
#
#   scripts/test-matrix.sh [--prepare] [TARGET ...]   TARGET: bookworm, trixie, sid (default: all)
#
# --prepare only builds (or updates) the chroots, for warming the cache.
#
#   target    PostgreSQL  what runs in it
#   bookworm  15          the Debian package only: built in a chroot that has only
#                         the package's Build-Depends (so a plain `make && make install`
#                         needs nothing more), installed with dpkg, smoke-tested
#                         in a cluster made by pg_createcluster. 15's full suite is
#                         `make test` on the host.
#   trixie    17          the package as above, then make, make install, pg_regress,
#   sid       18          and the TAP suite against that server; in trixie also the
#                         Python package's suite (make python-test) with Debian 13's
#                         Python, NumPy, SQLAlchemy, Django and drivers, newer
#                         than those `make test` uses on the host.
#
# The core tests (GoogleTest, sanitizers, fuzzer) do not run in the chroots:
# src/core has no PostgreSQL headers, so its code and tests do not change with
# the server's major version, and `make test` runs them on the host. The
# chroots compile the core as part of the extension with their own compiler
# (trixie's gcc 14, sid's gcc 16 today), and pg_regress and TAP exercise it there.
#
# Chroots are made with `debootstrap --variant=minbase` and cached in
# $MINHASH_CHROOTS (default /var/cache/minhash-chroots, outside the clone): a
# second run reuses them and only installs what is missing. A fresh machine
# builds them (a few minutes each). The clone's files (tracked and untracked,
# not ignored) are copied into the chroot's /build/minhash for each run, with
# the history as its .git (161_pending_upgrade builds the 1.1 release from it;
# scripts/tap.sh carries it on).
set -euo pipefail

# ---------------------------------------------------------------------------
# Inside a chroot: scripts/test-matrix.sh --inside TARGET MAJOR ROLE
# ---------------------------------------------------------------------------
smoke_package() {
    local major=$1 port
    port=$(free_port)
    pg_createcluster "$major" smoke -p "$port" -- --auth=trust >/dev/null
    pg_ctlcluster "$major" smoke start
    local out
    out=$(runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -tA -p "$port" -d postgres <<'EOT'
CREATE EXTENSION minhash;
SELECT extversion FROM pg_extension WHERE extname = 'minhash';
CREATE TABLE smoke (id int, body text);
INSERT INTO smoke VALUES
  (1, 'The quick brown fox jumps over the lazy dog near the river bank'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bend'),
  (3, 'PostgreSQL extensions add types, functions and index access methods');
CREATE INDEX smoke_idx ON smoke USING lsh (minhash(body));
SET enable_seqscan = off;
SELECT string_agg(id::text, ',' ORDER BY id) FROM smoke
 WHERE minhash(body) % minhash('The quick brown fox jumps over the lazy dog near the river bank');
EOT
    ) || { pg_dropcluster --stop "$major" smoke || true; return 1; }
    pg_dropcluster --stop "$major" smoke
    echo "$out"
    # The version the package installs, and the two near-duplicates (0.82)
    # found through the lsh index, not the unrelated row.
    if [ "$out" != "$(printf '%s\n%s' "$(extversion)" "1,2")" ]; then
        echo "package smoke test on PostgreSQL $major: unexpected output" >&2
        return 1
    fi
}

extversion() { sed -n 's/^EXTVERSION *= *//p' Makefile; }

free_port() {
    local p
    for _ in $(seq 1 100); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
    echo "no free port" >&2
    return 1
}

# The cached chroot keeps no pgminhash either.
pip_uninstall_pgminhash() {
    python3 -m pip uninstall -y -q --break-system-packages --root-user-action=ignore \
        --disable-pip-version-check pgminhash
}

inside() {
    local target=$1 major=$2 role=$3 python=$4
    cd /build/minhash
    export PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
    # install-deps.sh (called by `make deb`) then checks this major's packages,
    # which the chroot has.
    export MINHASH_PG_MAJOR=$major
    local version
    version=$("$PG_CONFIG" --version)
    echo "== [$target] $version, $(g++ --version | head -n 1) =="
    case "$version" in "PostgreSQL $major."*) ;; *) echo "expected PostgreSQL $major" >&2; exit 1 ;; esac

    echo "== [$target] Debian package: build =="
    make deb
    local deb
    deb=$(ls build/deb/postgresql-"$major"-minhash_*.deb)
    echo "== [$target] Debian package: install $(basename "$deb") and smoke test in a new cluster =="
    dpkg -i "$deb"
    smoke_package "$major"
    dpkg --purge "postgresql-$major-minhash" >/dev/null
    if [ -e "$("$PG_CONFIG" --pkglibdir)/minhash.so" ]; then
        echo "dpkg --purge left minhash.so behind" >&2
        exit 1
    fi
    [ "$role" = full ] || return 0

    echo "== [$target] make && make install =="
    make -j2
    make install
    echo "== [$target] pg_regress =="
    bash scripts/regress.sh
    echo "== [$target] TAP tests =="
    # 150_upgrade builds the 1.0 release, which exists for PostgreSQL 15 only:
    # it runs on the host (make test), not here (tap.sh fails a skipped file).
    # 162_format4 builds the last format-4 commit: what it checks (the current
    # build reading that format) does not depend on the major, so it runs on
    # the host only too (a build per major would add a minute each).
    # 200_citus needs Citus, built from its release tarball by scripts/citus.sh
    # on the host (make test, PostgreSQL 15); building it in each chroot would
    # add about 4 minutes per major to CI, and the tarballs are not in them.
    local taps=()
    for t in tests/t/*.pl; do
        case "$t" in */150_upgrade.pl | */162_format4.pl) [ "$major" = 15 ] || continue ;; esac
        case "$t" in */200_citus.pl) continue ;; esac
        taps+=("$t")
    done
    bash scripts/tap.sh "${taps[@]}"
    if [ "$python" = yes ]; then
        echo "== [$target] Python package (python/) =="
        make python-install
        make python-test
        pip_uninstall_pgminhash
    fi
    # Leave the cached chroot without the extension, so the next run's package
    # test starts from a server that does not have it.
    make uninstall >/dev/null
}

if [ "${1:-}" = --inside ]; then
    shift
    inside "$@"
    exit 0
fi

# ---------------------------------------------------------------------------
# On the host
# ---------------------------------------------------------------------------
cd "$(dirname "$0")/.."
root=$(pwd)
cache=${MINHASH_CHROOTS:-/var/cache/minhash-chroots}

if [ "$(id -u)" -ne 0 ]; then
    echo "test-matrix needs root (debootstrap, chroot, mount): run it as root or with sudo" >&2
    exit 1
fi

# target -> suite, PostgreSQL major, role
declare -A MAJOR=([bookworm]=15 [trixie]=17 [sid]=18)
declare -A ROLE=([bookworm]=package [trixie]=full [sid]=full)
declare -A PYTHON=([bookworm]=no [trixie]=yes [sid]=no)
prepare_only=0
if [ "${1:-}" = --prepare ]; then prepare_only=1; shift; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bookworm trixie sid)
for t in "${targets[@]}"; do
    [ -n "${MAJOR[$t]:-}" ] || { echo "unknown target $t (bookworm, trixie, sid)" >&2; exit 2; }
done

bash scripts/install-deps.sh --only matrix

# The Debian mirror the host uses (the only one it may reach).
mirror=${MINHASH_DEBIAN_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
    | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)}
mirror=${mirror:-http://deb.debian.org/debian}

packages_for() {
    local major=$1 role=$2 python=$3
    # What the package's Build-Depends name, plus the server to run it on.
    local p=(build-essential debhelper postgresql-server-dev-all
        "postgresql-server-dev-$major" libxxhash-dev libunistring-dev nettle-dev
        "postgresql-$major")
    # The test toolchain (pg_regress comes with the server, TAP needs IPC::Run,
    # the client example psycopg, 161_pending_upgrade git to build 1.1).
    [ "$role" = full ] && p+=(perl libipc-run-perl python3 python3-psycopg git)
    # The Python package's build and its adapters' drivers and frameworks.
    [ "$python" = yes ] && p+=(python3-dev python3-pip python3-setuptools python3-wheel
        python3-pybind11 python3-numpy python3-pytest python3-psycopg2 python3-asyncpg
        python3-sqlalchemy python3-django)
    echo "${p[@]}"
}

mounted=()
cleanup_mounts() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || true
    done
    mounted=()
}
trap cleanup_mounts EXIT

mount_chroot() {
    local dir=$1
    if ! mountpoint -q "$dir/proc"; then
        mount -t proc proc "$dir/proc"
        mounted+=("$dir/proc")
    fi
    # PostgreSQL's dynamic shared memory (posix) lives in /dev/shm.
    mkdir -p "$dir/dev/shm"
    if ! mountpoint -q "$dir/dev/shm"; then
        mount -t tmpfs -o mode=1777,size=1g shm "$dir/dev/shm"
        mounted+=("$dir/dev/shm")
    fi
}

in_chroot() {
    local dir=$1
    shift
    chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

prepare_chroot() {
    local target=$1 dir=$cache/$1 major=${MAJOR[$1]} role=${ROLE[$1]}
    if [ ! -x "$dir/usr/bin/apt-get" ]; then
        echo "== [$target] debootstrap --variant=minbase $target ($mirror) =="
        rm -rf "$dir.partial"
        local t0=$SECONDS
        debootstrap --variant=minbase "$target" "$dir.partial" "$mirror" >"$cache/$target.debootstrap.log" 2>&1 \
            || { tail -n 30 "$cache/$target.debootstrap.log" >&2; exit 1; }
        rm -rf "$dir"
        mv "$dir.partial" "$dir"
        echo "debootstrap took $((SECONDS - t0)) s"
    fi
    # No service starts in the chroot, and installing a server makes no cluster.
    printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
    mkdir -p "$dir/etc/postgresql-common"
    [ -f "$dir/etc/postgresql-common/createcluster.conf" ] \
        || echo "create_main_cluster = false" >"$dir/etc/postgresql-common/createcluster.conf"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    mount_chroot "$dir"

    local wanted
    wanted=$(packages_for "$major" "$role" "${PYTHON[$target]}")
    if [ "$(cat "$dir/.minhash-packages" 2>/dev/null)" != "$wanted" ]; then
        echo "== [$target] apt-get install $wanted =="
        local t0=$SECONDS
        # sid's Release file may be older than its Valid-Until on a snapshot mirror.
        in_chroot "$dir" apt-get -qq -o Acquire::Check-Valid-Until=false update
        # shellcheck disable=SC2086
        in_chroot "$dir" apt-get install -y -qq --no-install-recommends \
            -o Dpkg::Options::=--force-confold $wanted >"$cache/$target.apt.log" 2>&1 \
            || { tail -n 40 "$cache/$target.apt.log" >&2; exit 1; }
        in_chroot "$dir" apt-get clean
        echo "$wanted" >"$dir/.minhash-packages"
        echo "apt-get install took $((SECONDS - t0)) s"
    fi
}

copy_source() {
    local dir=$1
    rm -rf "$dir/build/minhash"
    mkdir -p "$dir/build/minhash"
    if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # Tracked and untracked files, not ignored ones (build output), as they
        # are in the working tree now.
        (cd "$root" && git ls-files -z -co --exclude-standard \
            | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
            | tar --null -T - -cf -) | tar -C "$dir/build/minhash" -xf -
        # The history: a bare clone made the copy's repository (no index, so
        # every copied file is "untracked", which tap.sh's git ls-files -co lists).
        git clone -q --bare "$(git -C "$root" rev-parse --show-toplevel)" "$dir/build/minhash/.git"
        git -C "$dir/build/minhash/.git" config core.bare false
    else
        tar -C "$root" --exclude=./build -cf - . | tar -C "$dir/build/minhash" -xf -
    fi
}

mkdir -p "$cache"
started=$SECONDS
summary=()
for t in "${targets[@]}"; do
    t0=$SECONDS
    exec 9>"$cache/$t.lock"
    flock 9
    prepare_chroot "$t"
    if [ "$prepare_only" = 1 ]; then
        cleanup_mounts
        exec 9>&-
        summary+=("$t: prepared in $((SECONDS - t0)) s")
        continue
    fi
    copy_source "$cache/$t"
    status=0
    in_chroot "$cache/$t" bash /build/minhash/scripts/test-matrix.sh --inside "$t" "${MAJOR[$t]}" "${ROLE[$t]}" "${PYTHON[$t]}" || status=$?
    cleanup_mounts
    exec 9>&-
    if [ "$status" -ne 0 ]; then
        echo "test-matrix: $t (PostgreSQL ${MAJOR[$t]}) FAILED" >&2
        exit "$status"
    fi
    summary+=("$t (PostgreSQL ${MAJOR[$t]}, ${ROLE[$t]}): passed in $((SECONDS - t0)) s")
done
echo "== test-matrix summary =="
printf '%s\n' "${summary[@]}"
echo "test-matrix wall time: $((SECONDS - started)) s"
