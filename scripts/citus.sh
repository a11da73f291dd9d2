#!/usr/bin/env bash
# Citus for the tests (tests/t/200_citus.pl). Citus is a test dependency of
# minhash only: it is never copied into the project nor shipped in its package.
#
#   scripts/citus.sh            make sure the PostgreSQL of PG_CONFIG has Citus
#   scripts/citus.sh --check    only say whether it has (exit 1, loudly, if not)
#
# Where Citus comes from, first found:
#  1. that PostgreSQL already has it (citus.so and citus.control, e.g. from the
#     Citus Debian packages or an earlier run of this script): used as is;
#  2. a build cached in $MINHASH_CITUS_CACHE (default /var/cache/minhash-citus,
#     outside the clone, like the chroots of scripts/test-matrix.sh), keyed by
#     the Citus version, the PostgreSQL version (`pg_config --version`, minor
#     included: 13.2.2 needs a fix for 15.20 that older minors must not get)
#     and the tarball's checksum;
#  3. a build of the release tarball citus-VERSION.tar.gz (a `git archive` of
#     the tag) found in $MINHASH_CITUS_TARBALLS; by default the `shared/citus`
#     directory beside the repository this checkout was cloned from (CI clones
#     /work/main into /tmp, so a path relative to the clone would not find it),
#     else /work/shared/citus. About 4 minutes with make -j2 on 2 cores; the
#     result goes to the cache, so only the first run on a machine pays it.
# Then the cached files are copied into PG_CONFIG's pkglibdir and extension
# directory. Needs liblz4-dev, libzstd-dev and libkrb5-dev (install-deps.sh).
#
# The Citus version follows the PostgreSQL major (13.2.2 supports 15-17, 14.0.1
# 16-18); MINHASH_CITUS_VERSION picks another.
#
# With neither an installed Citus nor a tarball this fails and says why: the
# Citus TAP test would fail too. MINHASH_SKIP_CITUS=1 (scripts/test.sh,
# scripts/tap.sh) leaves the Citus test out instead, with a warning.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

pkglibdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
pg_version=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9][0-9.]*\).*/\1/p')
major=${pg_version%%.*}

loud() {
    {
        echo "############################################################################"
        printf '# %s\n' "$@"
        echo "############################################################################"
    } >&2
}

if [ -f "$pkglibdir/citus.so" ] && [ -f "$extdir/citus.control" ]; then
    echo "citus: $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$extdir/citus.control") is installed in $pkglibdir"
    exit 0
fi
if [ "${1:-}" = --check ]; then
    loud "Citus is not installed in the PostgreSQL of $PG_CONFIG" \
        "(no $pkglibdir/citus.so): run scripts/citus.sh to build and install it"
    exit 1
fi

case "$major" in
15) versions=(13.2.2) ;;
16 | 17) versions=(14.0.1 13.2.2) ;;
18) versions=(14.0.1) ;;
*) versions=() ;;
esac
[ -z "${MINHASH_CITUS_VERSION:-}" ] || versions=("$MINHASH_CITUS_VERSION")

# The tarballs: beside the origin repository, then the machine's shared copy.
tarball_dirs=()
if [ -n "${MINHASH_CITUS_TARBALLS:-}" ]; then
    tarball_dirs=("$MINHASH_CITUS_TARBALLS")
else
    origin=$(git config --get remote.origin.url 2>/dev/null || true)
    # a worktree's repository is its main checkout's .git
    [ -n "$origin" ] || origin=$(dirname "$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo /nonexistent/.git)")
    case "$origin" in /*) tarball_dirs+=("$(dirname "$origin")/shared/citus") ;; esac
    tarball_dirs+=(/work/shared/citus)
fi
tarball=""
version=""
for v in "${versions[@]}"; do
    for d in "${tarball_dirs[@]}"; do
        if [ -f "$d/citus-$v.tar.gz" ]; then
            tarball=$d/citus-$v.tar.gz
            version=$v
            break 2
        fi
    done
done
if [ -z "$tarball" ]; then
    loud "CITUS IS NOT AVAILABLE: tests/t/200_citus.pl will FAIL." \
        "PostgreSQL $pg_version ($PG_CONFIG) has no Citus, and no tarball" \
        "citus-{${versions[*]:-none for this major}}.tar.gz was found in: ${tarball_dirs[*]}." \
        "Install Citus for PostgreSQL $major, or point MINHASH_CITUS_TARBALLS at a directory" \
        "holding the release tarball, or run the tests with MINHASH_SKIP_CITUS=1 to leave" \
        "the Citus test out."
    exit 1
fi

sha=$(sha256sum "$tarball" | cut -c1-12)
cache=${MINHASH_CITUS_CACHE:-/var/cache/minhash-citus}
key=citus-$version-pg$pg_version-$(uname -m)-$sha
mkdir -p "$cache"
exec 9>"$cache/$key.lock"
flock 9

if [ ! -f "$cache/$key/.complete" ]; then
    echo "== citus: building $version for PostgreSQL $pg_version from $tarball (cached in $cache/$key) =="
    t0=$SECONDS
    work=$(mktemp -d "$cache/$key.build.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    tar -C "$work" -xzf "$tarball"
    src=$(echo "$work"/citus-*)
    # PostgreSQL 15.20 exports have_createdb_privilege() (commands/dbcommands.h),
    # which Citus 13.2.2's compatibility header defines again as a static inline
    # for majors below 16: "static declaration follows non-static declaration".
    # Where the server declares it, rename Citus's copy out of the way and use
    # the server's. Applied to the build tree only; the tarball stays as released.
    compat=$src/src/include/pg_version_compat.h
    if grep -q 'have_createdb_privilege' "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" \
        && grep -q '^have_createdb_privilege(void)$' "$compat"; then
        sed -i -e 's/^have_createdb_privilege(void)$/citus_own_have_createdb_privilege(void)/' "$compat"
        printf '\n#include "commands/dbcommands.h"\n' >>"$compat"
        echo "citus: applied the have_createdb_privilege fix (the server exports it)"
    fi
    (
        cd "$src"
        ./configure -q --without-libcurl PG_CONFIG="$PG_CONFIG" >"$work/configure.log" 2>&1 \
            || { tail -n 30 "$work/configure.log" >&2; exit 1; }
        # no JIT bitcode (it would need clang), as for minhash itself
        nice make -s -j2 with_llvm=no >"$work/make.log" 2>&1 \
            || { grep -E 'error|Error' "$work/make.log" | head -n 30 >&2; tail -n 20 "$work/make.log" >&2; exit 1; }
        make -s install DESTDIR="$work/stage" with_llvm=no >"$work/install.log" 2>&1 \
            || { tail -n 30 "$work/install.log" >&2; exit 1; }
    )
    rm -rf "$cache/$key"
    mkdir -p "$cache/$key.new/lib" "$cache/$key.new/extension"
    cp -a "$work/stage$pkglibdir"/. "$cache/$key.new/lib/"
    cp -a "$work/stage$extdir"/. "$cache/$key.new/extension/"
    cp "$src/LICENSE" "$cache/$key.new/"
    touch "$cache/$key.new/.complete"
    mv "$cache/$key.new" "$cache/$key"
    echo "citus: built in $((SECONDS - t0)) s"
fi

# The libraries (citus.so, citus_columnar.so, ...) and the extensions' control
# files and scripts, into the PostgreSQL of PG_CONFIG.
cp -a "$cache/$key/lib"/. "$pkglibdir/"
cp -a "$cache/$key/extension"/. "$extdir/"
echo "citus: $version installed into $pkglibdir (from $cache/$key)"
