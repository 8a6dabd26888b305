"""Provider adapters, one module per wire protocol / vendor.

Installed as ``agentflow.providers``; the core never imports it (model strings
are resolved lazily through ``agentflow.providers.registry``).

``HttpSettings`` (timeouts, retries, connection limit, headers, the rate
governor) is the one name of the adapters' shared machinery users pass in:
``from agentflow.providers import HttpSettings``.
"""

from agentflow.providers._http_settings import HttpSettings

__all__ = ["HttpSettings"]
