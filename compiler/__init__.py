"""capidx compiler: validate, build and report a capability catalog."""

# The one place the version is written: pyproject.toml reads it (`[tool.setuptools.dynamic]`), and every
# build records it without importing importlib.metadata (which a no-op rebuild would notice).
__version__ = "0.1.0"
