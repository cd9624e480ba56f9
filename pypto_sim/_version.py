"""The package version (pyproject.toml's, which must match): exported as pto.__version__ and stamped
into every sweep row's identity (sweep/identity.py), read here by the sweep so that it need not
import the package's top."""
__version__ = "0.1.0"
