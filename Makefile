# minhash: PGXS build of the extension, plus the project's entry points.
#
#   make demo    install what is missing, build, run a throwaway cluster with real text
#   make test    everything CI runs (core tests + sanitizers, pg_regress, TAP)
#   make tap     the TAP tests alone (scripts/tap.sh: PGXS's prove_installcheck as postgres)
#   make bench   the benchmark suite (bench/)
#   make test-matrix  the package, pg_regress and TAP on PostgreSQL 17 and 18
#                (and the package on 15) in cached Debian chroots
#   make deb     Debian packages postgresql-NN-minhash (debian/, pg_buildext) in build/deb/
#   make python-install  the Python package pgminhash (python/) for /usr/bin/python3, offline
#   make python-test     its pytest suite against a scratch cluster (scripts/pytest.sh)
#
# `make test` and `make demo` work on a fresh machine: they install the Debian
# packages first, so the PGXS include below may be absent on the first call.

EXTENSION  = minhash
EXTVERSION = 1.1
MODULE_big = minhash

CORE_SRCS = $(sort $(wildcard src/core/*.cpp))
PG_SRCS   = $(sort $(wildcard src/pg/*.cpp src/pg/lsh/*.cpp src/pg/pairs/*.cpp src/pg/citus/*.cpp))
OBJS      = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o)

# The current extension script is assembled from one file per feature
# (src/sql/NN_*.sql). Released scripts (minhash--1.0.sql) are frozen copies and
# every release since ships an upgrade script minhash--A--B.sql: see
# DEVELOPERS.md, "Changing SQL objects".
SQL_PARTS  = $(sort $(wildcard src/sql/*.sql))
DATA_built = $(EXTENSION)--$(EXTVERSION).sql
DATA       = $(filter-out $(DATA_built),$(wildcard $(EXTENSION)--*.sql))

REGRESS      = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)

# TAP tests (tests/t/*.pl, PostgreSQL::Test::Cluster) run by PGXS's own
# prove_installcheck: `make installcheck MINHASH_TAP=1 [PROVE_TESTS=...]`.
# Their clusters refuse to run as root, so scripts/tap.sh runs this as the
# postgres user in a scratch copy of the tree; plain `make installcheck`
# stays pg_regress only.
ifdef MINHASH_TAP
TAP_TESTS    = 1
REGRESS      =
PROVE_TESTS ?= $(sort $(wildcard tests/t/*.pl))
endif

PG_CPPFLAGS = -I$(srcdir)/src
PG_CXXFLAGS = -std=c++17 -fno-rtti -MMD -MP
# PostgreSQL 15 headers use `register`, which C++17 removed: not our code.
PG_CXXFLAGS += -Wno-register
SHLIB_LINK  = -lxxhash -lunistring -lnettle -lstdc++

# No JIT bitcode: it would need clang at build time and buys nothing for this module.
override with_llvm = no

PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/15/bin/pg_config) pg_config)
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

.DEFAULT_GOAL := all
.PHONY: test demo bench coretest tap deps deb test-matrix python-install python-test

ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
all:
	@echo "PostgreSQL server headers are missing: run 'make demo' or 'make test' (they install them)" >&2
	@exit 1
endif

# After the include: Makefile.global sets PROVE_FLAGS empty. tests/t holds
# the tests' own module (MinhashTAP.pm).
ifdef MINHASH_TAP
PROVE_FLAGS += -I tests/t --timer
endif

# Header dependencies written by -MMD: a changed struct rebuilds its users.
-include $(OBJS:.o=.d)
EXTRA_CLEAN = $(OBJS:.o=.d)

# The core is the hot path: optimise it harder than the glue.
src/core/%.o: override CXXFLAGS += -O3
# The glue cannot throw or catch: the core's entry points are noexcept and
# return minhash::Status (src/pg/core_call.h); pg/pg_prelude.h checks the flag.
src/pg/%.o: override CXXFLAGS += -fno-exceptions

$(DATA_built): $(SQL_PARTS)
	cat $^ > $@

deps:
	bash scripts/install-deps.sh

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

bench:
	bash bench/run.sh

coretest:
	bash scripts/coretest.sh

deb:
	bash scripts/deb.sh

test-matrix:
	bash scripts/test-matrix.sh

tap:
	bash scripts/tap.sh

# The Python package (python/, docs/python.md) for the system interpreter,
# built from Debian's packages alone: their setuptools, wheel and pybind11
# (no build isolation), no dependency resolution, no package index. Debian's
# pip refuses to touch the system interpreter without
# --break-system-packages; it installs into /usr/local, not into the
# directories dpkg manages.
MINHASH_PYTHON ?= /usr/bin/python3
python-install:
	$(MINHASH_PYTHON) -m pip install --no-build-isolation --no-deps --no-index \
		--break-system-packages --root-user-action=ignore --disable-pip-version-check ./python

python-test:
	bash scripts/pytest.sh
