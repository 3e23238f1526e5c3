"""The package version, in a module of its own so that any module can import it.

(``sim/__init__`` imports the notebook API lazily; a module that took the version from
``sim`` itself would depend on the package's top.)
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
