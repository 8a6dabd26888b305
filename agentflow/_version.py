"""The package version (one place: ``agentflow.__version__`` and telemetry read it)."""

__version__ = "0.1.0"
