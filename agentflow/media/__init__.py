"""Images and PDF documents in messages: the blocks (``blocks``), their media types
and checks (``types``) and their token costs (``tokens``). The public names are
re-exported by ``agentflow`` and ``agentflow.content``; this file makes the folder
a regular package (the API reference's loader, griffe, resolves names only
through regular packages)."""
