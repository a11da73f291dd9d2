#!/usr/bin/python3
"""Validates META.json (the PGXN distribution metadata) for `make test`.

   /usr/bin/python3 scripts/check-meta.py [META.json]

1. JSON Schema validation (python3-jsonschema, Draft 2020-12) against
   tests/meta/pgxn-meta-v1.schema.json, the PGXN Meta Spec 1.0.0 written out
   as a schema: required keys, types, license shortcuts, SemVer versions,
   prereq phases, custom keys only as x_...
2. What a schema cannot see: the files it names exist in the distribution,
   and its versions agree with the extension's (Makefile EXTVERSION,
   minhash.control's default_version, debian/changelog).
3. The checker checks: broken copies of the metadata (a required key
   missing, an unknown license, a non-SemVer version, an unknown key) must
   be rejected, or this script fails.

Debian's python3 is used on purpose (the shebang): python3-jsonschema is what
scripts/install-deps.sh installs.
"""
import copy
import json
import os
import re
import sys

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "tests", "meta", "pgxn-meta-v1.schema.json")


def schema_errors(meta, schema):
    validator = jsonschema.Draft202012Validator(schema)
    return sorted(
        "/".join(str(p) for p in e.absolute_path) + ": " + e.message
        for e in validator.iter_errors(meta)
    )


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def consistency_errors(meta):
    errors = []
    ext = re.search(r"^EXTVERSION\s*=\s*(\S+)", read("Makefile"), re.M).group(1)
    control = re.search(r"^default_version\s*=\s*'([^']+)'", read("minhash.control"), re.M).group(1)
    deb = re.match(r"\S+ \(([^)]+)\)", read("debian/changelog")).group(1)
    # PGXN wants SemVer: extension version 1.1 is distribution version 1.1.0.
    semver = ext + ".0" if ext.count(".") == 1 else ext
    if control != ext:
        errors.append(f"minhash.control default_version {control} != Makefile EXTVERSION {ext}")
    if meta.get("version") != semver:
        errors.append(f"META.json version {meta.get('version')} != {semver} (EXTVERSION {ext})")
    for name, ext_meta in meta.get("provides", {}).items():
        if ext_meta.get("version") != semver:
            errors.append(f"provides/{name}/version {ext_meta.get('version')} != {semver}")
        for key in ("file", "docfile"):
            if key in ext_meta and not os.path.isfile(os.path.join(ROOT, ext_meta[key])):
                errors.append(f"provides/{name}/{key}: no file {ext_meta[key]}")
    if deb.split("-")[0] != ext:
        errors.append(f"debian/changelog version {deb} is not EXTVERSION {ext}")
    return errors


def broken_copies(meta):
    """Metadata the spec forbids, each of which the schema must reject."""
    def without(key):
        m = copy.deepcopy(meta)
        del m[key]
        return m

    def with_(path, value):
        m = copy.deepcopy(meta)
        node = m
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
        return m

    yield "no name", without("name")
    yield "no abstract", without("abstract")
    yield "no maintainer", without("maintainer")
    yield "no license", without("license")
    yield "no provides", without("provides")
    yield "no meta-spec", without("meta-spec")
    yield "no version", without("version")
    yield "license not a PGXN shortcut", with_(["license"], "PostgreSQL License")
    yield "version not SemVer", with_(["version"], "1.1")
    yield "provides without file", with_(["provides", "minhash"], {"version": "1.1.0"})
    yield "unknown top-level key", with_(["homepage"], "https://example.org")
    yield "meta-spec 2", with_(["meta-spec", "version"], "2.0.0")
    yield "unknown prereq phase", with_(["prereqs"], {"install": {"requires": {"PostgreSQL": "15.0.0"}}})
    yield "name with a space", with_(["name"], "min hash")
    yield "bad release_status", with_(["release_status"], "beta")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "META.json")
    with open(path, encoding="utf-8") as f:
        meta = json.load(f)
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)

    errors = schema_errors(meta, schema) + consistency_errors(meta)
    for name, bad in broken_copies(meta):
        if not schema_errors(bad, schema):
            errors.append(f"checker accepts broken metadata: {name}")
    if errors:
        for e in errors:
            print(f"META.json: {e}", file=sys.stderr)
        return 1
    print(f"META.json: valid PGXN Meta Spec {meta['meta-spec']['version']} "
          f"({meta['name']} {meta['version']}); {sum(1 for _ in broken_copies(meta))} broken copies rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
