"""agentflow tests (a package, so tests can import ``tests.fakes``)."""
