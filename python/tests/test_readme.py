"""The README's Python example (section "From Python") runs against a fresh
database and prints what the README says it prints, so the example cannot
rot (as tests/t/152_client_example.pl does for "From a client program")."""
import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example(conn, dbname):
    section = re.search(r"^## From Python\n(.*?)^## ", README.read_text(), re.M | re.S)
    assert section, 'README.md has no section "From Python"'
    example = re.search(r"^```python\n(.*?)^```\n```\n(.*?)^```", section.group(1), re.M | re.S)
    assert example, "the section has no ```python block followed by its output"
    code, expected = example.groups()
    assert 8 <= len(code.strip().splitlines()) <= 20
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PGDATABASE=dbname), timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
    assert conn.execute("SELECT count(*) FROM pydocs").fetchone()[0] == 3
