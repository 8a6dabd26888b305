"""Provider adapters, one module per wire protocol / vendor.

Installed as ``agentflow.providers``; the core never imports it (model strings
are resolved lazily through ``agentflow.providers.registry``).
"""
