"""troupe_requires: the one line a troupe Python script prints when its python3 lacks a module.

troupe's scripts use Debian's Python packages (python3-protobuf, python3-numpy, ...). Under
another python3 first on PATH (a virtualenv, conda, one built from source) those are not on the
path, and the script would fail deep inside with "No module named google". Each script calls
require() at its top instead, before it imports what it needs:

    require(modules=("google.protobuf",), programs=("protoc",))

and a missing module or program gives one line on stderr naming it, the python3 that lacks it and
the command that installs it, and exit status 2.
"""

import importlib
import os
import shutil
import sys

# The Debian package of each module and program troupe's scripts use.
PACKAGES = {
    "google.protobuf": "python3-protobuf",
    "numpy": "python3-numpy",
    "matplotlib": "python3-matplotlib",
    "pandas": "python3-pandas",
    "protoc": "protobuf-compiler",
}


def _has_module(name):
    # Imported, not only found: a module that is there but cannot load counts as missing.
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def _fail(what, name, prog):
    prog = prog or (os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "troupe")
    # Debian's packages go to Debian's python3: another one must give way to it.
    other = "" if sys.executable == "/usr/bin/python3" else " and run the script with /usr/bin/python3"
    print(f"{prog}: {sys.executable} has no {what} {name}: install it with "
          f"`apt-get install {PACKAGES.get(name, name)}` (scripts/install-deps.sh){other}",
          file=sys.stderr)
    sys.exit(2)


def require(modules=(), programs=(), prog=None):
    """Exits with status 2 and one line on stderr (from `prog`, else the script's name) unless
    every module and program is there."""
    for name in modules:
        if not _has_module(name):
            _fail("Python module", name, prog)
    for name in programs:
        if shutil.which(name) is None:
            _fail("program", name, prog)
