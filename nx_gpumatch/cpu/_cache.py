"""Where Numba caches the package's compiled kernels: one folder per user,
keyed by the content of the package's source files, so that a reinstall of the package or
a new environment with the same package, Numba and Python loads the kernels an
earlier one compiled instead of compiling them again.

Numba's own choice (``__pycache__`` next to the package) is lost with every new
environment. The folder is ``$NX_GPUMATCH_CACHE_DIR``, else
``$XDG_CACHE_HOME/nx-gpumatch``, else ``~/.cache/nx-gpumatch``, with one
subfolder per Numba version (Numba's file names carry the Python version).
``NUMBA_CACHE_DIR`` still wins when set. An unwritable folder falls back to
Numba's own choice. Numba's list of cache locators is not public API: if it
changes, :func:`install` does nothing and Numba's default applies.
"""

import functools
import hashlib
import os

__all__ = ["cache_root", "install"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_root():
    """The folder the package's kernels are cached in (see the module's doc)."""
    own = os.environ.get("NX_GPUMATCH_CACHE_DIR", "").strip()
    if own:
        return os.path.abspath(own)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = base or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "nx-gpumatch")


@functools.cache
def _package_digest():
    """SHA-256 of every Python source file of the package: a kernel's compiled
    code also holds the helpers and constants it takes from other files, so any
    change to the package invalidates every cached kernel."""
    h = hashlib.sha256()
    for folder, subfolders, files in os.walk(_PACKAGE):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, _PACKAGE).encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def _locator_class(base, numba_version):
    class PackageCacheLocator(base):
        """Numba cache locator of the package's own source files."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            rel = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), _PACKAGE)
            self._path = os.path.join(cache_root(), f"numba-{numba_version}", rel)

        def get_cache_path(self):
            return self._path

        def get_source_stamp(self):
            return _package_digest()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            path = os.path.abspath(py_file)
            if not path.startswith(_PACKAGE + os.sep) or not os.path.isfile(path):
                return None
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    return PackageCacheLocator


def install():
    """Put the package's locator right after the one of ``NUMBA_CACHE_DIR``
    (once); True when it is in place."""
    import numba
    from numba.core import caching

    # older Numba versions name these with a leading underscore
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = getattr(caching, "_CacheLocator", None)
    first = getattr(caching, "UserProvidedCacheLocator", None) or getattr(
        caching, "_UserProvidedCacheLocator", None
    )
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or base is None:
        return False
    if any(getattr(c, "__qualname__", "").endswith("PackageCacheLocator") for c in classes):
        return True
    at = classes.index(first) + 1 if first in classes else 0
    classes.insert(at, _locator_class(base, numba.__version__))
    return True
