"""Build of pgminhash: the extension module _core compiles the server's own
core library (../src/core) with a pybind11 binding (src/pgminhash/_core.cpp).

Offline, from Debian packages only (python3-pybind11, python3-numpy,
python3-setuptools, python3-wheel, python3-dev, libxxhash-dev,
libunistring-dev, nettle-dev):

    make python-install          # from the top of the repository, or:
    /usr/bin/python3 -m pip install --no-build-isolation --no-deps --no-index .
"""
import os
import re
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rel(path):
    # setuptools wants sources relative to this file
    return os.path.relpath(path, HERE)


def extension_version():
    # one version for the extension and the package: the signatures they make are the same
    with open(os.path.join(ROOT, "minhash.control")) as f:
        return re.search(r"default_version\s*=\s*'([^']+)'", f.read()).group(1)


core_sources = sorted(glob(os.path.join(ROOT, "src", "core", "*.cpp")))
if not core_sources:
    raise SystemExit("src/core not found: build pgminhash from a minhash checkout")

ParallelCompile("MINHASH_BUILD_JOBS", default=2).install()

setup(
    name="pgminhash",
    version=extension_version(),
    description="The minhash PostgreSQL extension's signatures in Python, and adapters for "
    "psycopg, psycopg2, asyncpg, SQLAlchemy and Django",
    license="PostgreSQL",
    packages=["pgminhash"],
    package_dir={"": "src"},
    python_requires=">=3.9",
    install_requires=["numpy"],
    ext_modules=[
        Pybind11Extension(
            "pgminhash._core",
            [rel(os.path.join(HERE, "src", "pgminhash", "_core.cpp"))] + [rel(s) for s in core_sources],
            include_dirs=[rel(os.path.join(ROOT, "src"))],
            libraries=["xxhash", "unistring", "nettle"],
            cxx_std=17,
            # the core's hot loop, as the extension's Makefile builds it
            extra_compile_args=["-O3"],
        )
    ],
    cmdclass={"build_ext": build_ext},
    zip_safe=False,
)
