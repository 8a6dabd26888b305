"""Side-by-side benchmark of agentflow against the frameworks users would pick instead.

See ``benchmarks/compare/README.md`` for what is measured and how to run it.
"""
