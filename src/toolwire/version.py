"""The version of toolwire, in one place: the package, the run log and the build read it here."""

__version__ = "0.1.0"
