"""The Gemini Files API's resumable upload, as google-genai's ``files.upload``
speaks it: how a batch too large to send inline reaches Gemini batch mode.

Wire facts (ai.google.dev/gemini-api/docs/files and the REST example of
ai.google.dev/gemini-api/docs/batch-mode, "Input file"; google-genai
``files.py`` ``upload``, ``_extra_utils.py`` (the start headers) and
``_api_client.py`` ``upload_file`` (the chunk loop, ``CHUNK_SIZE``)):

* Start: ``POST {origin}/upload/{version}/files`` with ``X-Goog-Upload-Protocol:
  resumable``, ``X-Goog-Upload-Command: start``,
  ``X-Goog-Upload-Header-Content-Length: <bytes>``,
  ``X-Goog-Upload-Header-Content-Type: <media type>`` and a JSON body
  ``{"file": {"displayName"}}``; the answer's ``X-Goog-Upload-URL`` header is
  where the bytes go (``X-Goog-Upload-Status: active``).
* Bytes: ``POST`` to that URL in chunks of 8 MB (the SDK's ``CHUNK_SIZE``),
  each with ``X-Goog-Upload-Offset: <bytes sent so far>`` and
  ``X-Goog-Upload-Command: upload`` (``upload, finalize`` on the last); a
  chunk is answered ``X-Goog-Upload-Status: active``, the last one ``final``
  with ``{"file": {"name": "files/...", "uri", "state", ...}}``.
* A file holds at most 2 GB (the Files API's limit, and the batch input
  file's); the project keeps files 48 hours.

The upload URL must be on the API's origin (the key is sent with each
chunk); another origin is a ``RedirectError``, never followed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from agentflow.errors import RedirectError, ServerError
from agentflow.providers._batch_wire import BatchHttp, read_capped, same_origin

__all__ = ["CHUNK_BYTES", "MAX_FILE_BYTES", "start_url", "upload_file"]

CHUNK_BYTES = 8 * 1024 * 1024
"""Bytes per upload request (google-genai ``_api_client.CHUNK_SIZE``)."""

MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
"""The most one uploaded file holds (ai.google.dev/gemini-api/docs/files: 2 GB)."""


def start_url(base_url: str) -> str:
    """The upload start URL of an API root: ``https://host/v1beta`` ->
    ``https://host/upload/v1beta/files``; the root's query string (a
    gateway's ``?key=``) stays its query, as on every request's URL
    (``join_url``)."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/upload{parts.path.rstrip('/')}/files",
                       parts.query, ""))


async def upload_file(http: BatchHttp, content: bytes, *, media_type: str, display_name: str,
                      chunk_bytes: int = CHUNK_BYTES) -> str:
    """Upload ``content`` with the resumable protocol; return the file's name
    (``files/...``), which a batch names as its input (``inputConfig.fileName``).
    Each request is retried as usual (re-sending a chunk at its offset is what
    the protocol is for; a file costs nothing until a batch uses it).

    Raises:
        ValueError: ``content`` is empty or ``chunk_bytes`` < 1.
        RedirectError: the upload URL is on another origin than the API.
        ServerError: no upload URL, a chunk not acknowledged, or no file name
            in the final answer.
        ProviderError: as the client's.
    """
    if not content or chunk_bytes < 1:
        raise ValueError("an upload needs some bytes and a positive chunk size")
    vendor = http.vendor
    headers = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
               "X-Goog-Upload-Header-Content-Length": str(len(content)),
               "X-Goog-Upload-Header-Content-Type": media_type}
    async with http.client.open(start_url(http.base_url), {"file": {"displayName": display_name}},
                                headers=headers) as response:
        url = response.headers.get("X-Goog-Upload-URL")
        await read_capped(http.client, response)
    if not url:
        raise ServerError("the Files API started an upload without an X-Goog-Upload-URL",
                          vendor=vendor)
    if not same_origin(url, http.base_url):
        raise RedirectError(f"the Files API's upload URL is on another origin ({url}); the key "
                            f"is not sent there", location=url, status=None, vendor=vendor)
    offset = 0
    while True:
        chunk = content[offset:offset + chunk_bytes]
        last = offset + len(chunk) >= len(content)
        command = "upload, finalize" if last else "upload"
        async with http.client.open(url, {}, raw=chunk, headers={
                "X-Goog-Upload-Command": command, "X-Goog-Upload-Offset": str(offset),
                "content-type": "application/octet-stream"}) as response:
            status = response.headers.get("X-Goog-Upload-Status")
            raw = await read_capped(http.client, response)
        offset += len(chunk)
        if not last:
            if status != "active":
                raise ServerError(f"the Files API stopped the upload at byte {offset:,} of "
                                  f"{len(content):,} (status {status!r})", vendor=vendor)
            continue
        if status != "final":
            raise ServerError(f"the Files API did not finalize the upload (status {status!r})",
                              vendor=vendor)
        return _file_name(vendor, raw)


def _file_name(vendor: str, raw: bytes) -> str:
    try:
        data: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    file = data.get("file") if isinstance(data, Mapping) else None
    name = file.get("name") if isinstance(file, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ServerError(f"the Files API finished an upload without a file name: "
                          f"{raw[:200]!r}", vendor=vendor)
    return name
