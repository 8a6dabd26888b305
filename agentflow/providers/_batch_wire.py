"""What the vendor batch-API modules share (``_anthropic_batch``, ``_gemini_batch``).

* ``whole_reply``: the chunks of one batch reply, read exactly as the live
  adapter reads a whole (non-streamed) reply: the adapter's ``parse_reply``
  under a ``ReplyGuard``, so a malformed reply is the same typed
  ``ServerError`` and an empty one is refused the same way.
* ``check_batch`` (``_batch_checks``): refuses, before any request, a batch the vendor would
  refuse or that the runner could not match back (duplicate or malformed
  ``custom_id``, too many requests, a payload over the byte limit).
* ``same_origin``: whether a URL a vendor hands back (a results URL) may
  receive the model's credentials.
* ``malformed_line``: the ``BatchResult`` of a results line that could not be
  read (no id: the runner drops it with a log line, never assigns it).
* ``BatchHttp`` (``_batch_http``): the two clients of a batch API: one for calls that may be
  repeated (polls, downloads, cancel: retried as usual) and one for the
  call that must not run twice (creating a batch: retried only after a
  refusal, 429 or overloaded, never after a 5xx or a broken connection,
  after which the batch may exist and a retry would pay twice).
* ``BatchWire``: the facts of one vendor's batch resource (plain data: its
  limits, paths, id field, status reader), and ``WireBatchAPI``, the
  ``BatchAPI`` methods every such vendor has alike (poll, cancel, create,
  limits, close) written once over them; a vendor module adds ``submit`` and
  ``results`` (and ``find`` where it keeps a tag).
* ``WholeReplyBatches``: the ``BatchCapable`` methods of an ``HttpChatModel``
  whose batch item is its live non-streaming request and whose batch reply is
  a whole live reply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agentflow._logging import get_logger
from agentflow._secrets import redact_urls
from agentflow.batch_api.protocol import (
    BatchLimits,
    BatchRequest,
    BatchState,
    BatchStatus,
)
from agentflow.errors import (
    BadRequestError,
    ProviderError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ToolSpec
from agentflow.providers._adapter import HttpChatModel
from agentflow.providers._batch_checks import (
    check_batch,
    check_size,
    malformed_line,
    same_origin,
)
from agentflow.providers._batch_http import (
    BatchHttp,
    ClosingBatchAPI,
    read_capped,
    require_mapping,
)
from agentflow.providers._http import HttpClient
from agentflow.providers._payload import ReplyGuard

__all__ = [
    "BatchHttp",
    "BatchWire",
    "ClosingBatchAPI",
    "WholeReplyBatches",
    "WireBatchAPI",
    "check_batch",
    "check_size",
    "malformed_line",
    "read_capped",
    "read_status",
    "require_mapping",
    "same_origin",
    "whole_reply",
]

_log = get_logger("agentflow.batch")


def whole_reply(
    vendor: str, parse_reply: Callable[[Any], Iterable[ModelChunk]], reply: Any
) -> list[ModelChunk]:
    """The chunks of one whole reply ``reply`` (parsed JSON) read by ``parse_reply``.

    Raises:
        ServerError: the reply is not of the vendor's shape, or carries neither
            content nor a finish reason (as for a live whole reply).
        ProviderError: the reply is the vendor's error object.
    """
    guard = ReplyGuard(vendor, stream=False)
    chunks = guard.fold(parse_reply, reply)
    guard.end()
    return chunks


@dataclass(frozen=True, slots=True)
class BatchWire:
    """The facts of one vendor's batch resource, for ``WireBatchAPI``.

    Attributes:
        vendor: named in errors and logs.
        limits: per-batch limits (the vendor module cites their source).
        resource: a batch id -> the path of the batch resource (polled with GET).
        cancel: a batch id -> the path its cancel is POSTed to.
        id_field: the field of the created resource that holds the batch id.
        kind: what the resource is called, in errors (``"message_batch"``).
        status_of: the resource's JSON -> a ``BatchStatus`` (raises
            ``LookupError``, ``TypeError`` or ``ValueError`` on another shape).
    """

    vendor: str
    limits: BatchLimits
    resource: Callable[[str], str]
    cancel: Callable[[str], str]
    id_field: str
    kind: str
    status_of: Callable[[Mapping[str, Any]], BatchStatus]


def read_status(wire: BatchWire, data: Mapping[str, Any]) -> BatchStatus:
    """``wire.status_of(data)``, a malformed resource being the vendor's fault.

    Raises:
        ProviderError: ``data`` is not the vendor's batch resource (or names an
            unknown state).
    """
    try:
        return wire.status_of(data)
    except (LookupError, TypeError, ValueError) as exc:
        raise ProviderError(f"malformed {wire.kind} ({exc}): {str(data)[:200]}",
                            vendor=wire.vendor) from exc


class WireBatchAPI(ClosingBatchAPI):
    """What every vendor ``BatchAPI`` over ``BatchHttp`` does alike, from the
    subclass's ``wire`` (``BatchWire``): poll, cancel, create, limits, close.
    Subclasses add ``submit`` and ``results``.

    Args:
        client: the model's ``HttpClient`` (its base URL, key and error
            mapping; the batch calls go through siblings of it, outside its
            rate governor: batches have limits of their own).

    Every method raises the client's ``ProviderError`` family.
    """

    wire: ClassVar[BatchWire]

    def __init__(self, client: HttpClient) -> None:
        self._http = BatchHttp(client)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={redact_urls(self._http.base_url)!r})"

    @property
    def limits(self) -> BatchLimits:
        """The vendor's per-batch limits (``wire.limits``)."""
        return self.wire.limits

    async def aclose(self) -> None:
        """Close the HTTP sessions (idempotent)."""
        await self._http.aclose()

    async def resource(self, batch_id: str) -> Mapping[str, Any]:
        """The batch resource's JSON (``GET wire.resource(batch_id)``).

        Raises:
            ProviderError: as the client's (``NotFoundError`` for an unknown
                id); ``ServerError`` for a reply that is not a JSON object.
        """
        data = await self._http.json(self.wire.resource(batch_id))
        return require_mapping(self.wire.vendor, data, self.wire.kind)

    async def status(self, batch_id: str) -> BatchStatus:
        """Poll a batch.

        Raises:
            ProviderError: as ``resource``; or the reply is not a batch
                resource (``read_status``).
        """
        return read_status(self.wire, await self.resource(batch_id))

    async def cancel(self, batch_id: str) -> None:
        """Ask for the batch to be cancelled (``POST wire.cancel(batch_id)``);
        a batch already cancelling or terminal is left as it is (the vendor's
        400 for it is read as done).

        Raises:
            ProviderError: as the client's.
        """
        try:
            await self._http.json(self.wire.cancel(batch_id), {})
        except BadRequestError:
            status = await self.status(batch_id)
            if not (status.state.terminal or status.state is BatchState.CANCELLING):
                raise
            _log.info("batch.cancel.already", vendor=self.wire.vendor, batch_id=batch_id,
                      state=str(status.state))

    async def create(self, path: str, body: Mapping[str, Any]) -> str:
        """Create a batch (``POST body`` to ``path``, sent once: ``BatchHttp.create``);
        return its id (the reply's ``wire.id_field``).

        Raises:
            ProviderError: as ``BatchHttp.create``; or the reply has no id
                (the batch may exist: the caller must not assume it does not).
        """
        data = await self._http.create(path, body)
        batch_id = data.get(self.wire.id_field) if isinstance(data, Mapping) else None
        if not isinstance(batch_id, str) or not batch_id:
            raise ProviderError(f"the batch was created but its reply has no "
                                f"{self.wire.id_field}: {str(data)[:200]}",
                                vendor=self.wire.vendor)
        return batch_id


class WholeReplyBatches(HttpChatModel):
    """An ``HttpChatModel`` that is ``BatchCapable``: a batch item is the live
    non-streaming request (``build_request(..., stream=False)``), a batch
    reply is read as a whole live reply (``parse_reply`` under a
    ``ReplyGuard``), and ``batch_api_type`` is the vendor's ``BatchAPI``.
    For wire formats whose tool calls are structured (no in-band markup to
    read against the request's tools)."""

    batch_api_type: ClassVar[type[WireBatchAPI]]

    def batch_api(self) -> WireBatchAPI:
        """The vendor's batch API on this model's base URL and key, outside the
        live rate governor."""
        return self.batch_api_type(self._client)

    def batch_request(
        self,
        custom_id: str,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> BatchRequest:
        """The live non-streaming request as one batch item (its path and body).

        Raises:
            UsageError / UnsupportedFeatureError: as ``build_request``.
        """
        path, body = self.build_request(messages, tools, options, stream=False)
        return BatchRequest(custom_id, path, body)

    def parse_batch_reply(
        self, reply: Any, tools: Sequence[ToolSpec] = ()
    ) -> Iterable[ModelChunk]:
        """The chunks of one batch reply, as of a whole live reply (``tools``
        unused: these wire formats carry tool calls as structured parts).

        Raises:
            ServerError: the reply is malformed or empty (as live).
            ProviderError: the reply is the vendor's error object.
        """
        return whole_reply(self.vendor, self.parse_reply, reply)
