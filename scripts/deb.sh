#!/usr/bin/env bash
# `make deb`: the Debian packages postgresql-NN-minhash, one per PostgreSQL
# major whose server headers are installed (of those debian/pgversions
# allows), built by dpkg-buildpackage with pg_buildext (postgresql-common).
# The .deb files (and .buildinfo, .changes) go to build/deb/.
#
# debian/control is generated from debian/control.in for the majors this
# machine supports (`pg_buildext updatecontrol`): the committed one is
# bookworm's (15); on trixie or sid this rewrites it for 17 or 18.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh --only deb

pg_buildext updatecontrol
version=$(dpkg-parsechangelog -S Version)
# dpkg-buildpackage writes next to the source directory: move what it made
# into build/deb (stale results of an earlier run there are removed first).
rm -rf build/deb
mkdir -p build/deb
dpkg-buildpackage -us -uc -b
shopt -s nullglob
made=(../postgresql-*minhash*_"$version"_*.deb ../postgresql-minhash_"$version"_*.buildinfo ../postgresql-minhash_"$version"_*.changes)
[ ${#made[@]} -gt 0 ] || { echo "dpkg-buildpackage made no package" >&2; exit 1; }
mv "${made[@]}" build/deb/
echo "== built =="
for f in build/deb/*.deb; do
    echo "$f"
    dpkg-deb -f "$f" Package Version Depends | sed 's/^/    /'
done
