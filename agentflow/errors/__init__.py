"""Every exception agentflow raises, in one place.

Three families, kept apart on purpose:

* **misuse** – the caller got the API wrong; raised before any model request;
* **provider failures** – the vendor's HTTP API refused or failed a request;
* **output failures** – the model misbehaved and no valid structured output
  could be obtained within the retry budget.

The tree::

    AgentflowError
    ├── UsageError                        misuse (also a TypeError/ValueError where fitting)
    │   ├── ArgumentTypeError             an argument of the wrong type (also a TypeError)
    │   ├── ArgumentValueError            an argument's value out of range (also a ValueError)
    │   ├── InvalidInputError             bad message input to call()/stream()
    │   │   ├── AlreadyDecidedError       a call decided again: an approval applies once (.call_ids)
    │   │   ├── MediaTypeError            image/document bytes of an unknown or mismatched type
    │   │   └── UnsupportedInputError     a block the model's profile refuses (.model, .modality)
    │   ├── InvalidModelError             model is not a ChatModel / unknown "vendor:model"
    │   │   ├── ModelArgumentError        a model's argument (local threads=0; also Argument*Error)
    │   │   └── InvalidChunkError         a model's stream gave a non-chunk (.model, .yielded)
    │   ├── ModelClosedError              a model used after its aclose() (.model)
    │   ├── InvalidStateError             AgentState JSON that is malformed or inconsistent
    │   ├── InvalidRecordError            an extraction record / results file that cannot be read
    │   ├── InvalidExampleError           a few-shot example that does not fit the output type
    │   ├── BatchUnavailableError         mode="batch" on a model without a vendor batch API
    │   ├── DuplicateInputIdError         two extract_many inputs share an id (.id, .first, .second)
    │   ├── ToolDefinitionError           a tool that cannot be declared
    │   │   ├── ToolNameError             a name outside ^[A-Za-z0-9_-]{1,64}$ or a duplicate
    │   │   ├── ToolTypeError             tools= not a list, a tool not callable (ArgumentTypeError)
    │   │   └── MCPToolSchemaError        an MCP tool's schema no model takes (.tool, .dialect)
    │   ├── MCPNotRunningError            an MCP server's tools used outside its `async with`
    │   └── SchemaError                   an output type the target dialect cannot express
    ├── ProviderError                     status, code, vendor, message
    │   ├── BadRequestError               400/422
    │   │   ├── ContextLengthError        over the model's context window (.limit, .requested)
    │   │   ├── GrammarEngineError        the server's grammar engine gave up mid-reply (.reason)
    │   │   └── UnsupportedFeatureError   400 naming a feature the model lacks (.feature)
    │   ├── AuthenticationError           401 (and Gemini's 400 API_KEY_INVALID)
    │   ├── PermissionDeniedError         403
    │   ├── NotFoundError                 404
    │   ├── QuotaExceededError            402 / insufficient_quota: never retried
    │   ├── RateLimitedError              429 (.retry_after seconds)
    │   ├── OverloadedError               503 / 529
    │   ├── ServerError                   other 5xx
    │   │   └── OutOfMemoryError          the model does not fit the server's memory: not retried
    │   ├── ContentFilteredError          filtered, moderated or refused: no answer
    │   │   └── ModeratedRequestError     refused by moderation, a 4xx (also a BadRequestError)
    │   ├── EmptyReplyError               a text call's model said nothing, twice (asked again)
    │   ├── ProviderTimeoutError          connect/read timeout
    │   │   └── DeadlineExceededError     the request's total deadline passed (never retried)
    │   ├── ProviderConnectionError       connection refused/reset, stream cut mid-way
    │   │   └── TruncatedStreamError      a stream ended without its finish reason / final frame
    │   ├── UnexpectedReplyError          2xx no reply: empty, HTML, no event, bad JSON (retried)
    │   ├── ReplyTooLargeError            a reply past HttpSettings.max_reply_bytes (.limit)
    │   ├── BatchRequestError             one request of a vendor batch has no reply (.kind)
    │   └── RedirectError                 3xx: never followed (credentials stay at their origin)
    ├── StateConflictError                a state save lost a race: the stored version moved on
    ├── MCPError                          an MCP server failed (.server, .target: command or URL)
    │   ├── MCPServerStartError           it could not start, connect or complete the handshake
    │   ├── MCPConnectionError            the connection was lost (the process exited mid-call)
    │   │   └── MCPReconnectError         the next call could not reconnect (.lost)
    │   ├── MCPStatusError                an HTTP error status, no JSON-RPC error (.status: 401...)
    │   └── MCPTimeoutError               a tool call passed its timeout (.tool, .timeout)
    ├── StrayCancelError                  a CancelledError nobody asked for ended one input's work
    ├── ToolError                         raised by a tool to return an error result on purpose
    ├── ToolRetriesExceededError          a tool kept failing past its retry budget (.tool)
    ├── ModelRetry                        signal: an output validator asks the model to retry
    └── StructuredOutputError             no valid output (.raw_text, .attempts)
        ├── StructuredOutputValidationError   on_invalid="raise": the output failed the schema
        ├── MultipleStructuredOutputsError    on_multiple="raise": several output calls at once
        ├── OutputTruncatedError              finish reason "length": the output was cut (.usage)
        ├── GroundingError                    grounded values not found in the source (.unfound)
        └── DegenerateOutputError             a repetition loop or repeated items (.problems)

    AgentflowError (input documents, agentflow.documents)
    └── DocumentError                     a file that cannot be turned into text (.path, .reason)
        ├── CorruptDocumentError          its reader cannot parse it (a damaged or mislabelled PDF)
        ├── EncryptedDocumentError        a PDF that needs a password to open
        ├── NoTextLayerError              a PDF with no text to extract (scanned pages: images)
        ├── DocumentTooComplexError       past a work budget or reader limit (.limit; HTML .depth)
        ├── DocumentEncodingError         bytes no encoding in the documented order decodes
        └── InvalidInputLineError         a JSONL input line that is not a document (one record)

    AgentflowError (long documents, agentflow.extraction)
    ├── EmptyDocumentError                a document with no text: no model call was made
    ├── ChunkFailedError                  one chunk's call failed (.start, .end; cause chained)
    └── MergeError                        chunk outputs do not merge into the schema (.field)
        └── MergeConflictError            must-agree field on which chunks disagree (.conflicts)

Messages say what was wrong and how to fix it. No error message or repr ever
holds an API key: ``ProviderError`` masks every registered credential and any
echoed prefix of one (``agentflow._secrets``) when it is built.
"""

from __future__ import annotations

from agentflow.errors._bad_request import (
    ContextLengthError,
    GrammarEngineError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.errors._document import (
    ChunkFailedError,
    CorruptDocumentError,
    DocumentEncodingError,
    DocumentError,
    DocumentTooComplexError,
    EmptyDocumentError,
    EncryptedDocumentError,
    InvalidInputLineError,
    MergeConflictError,
    MergeError,
    NoTextLayerError,
    UnreadableDocumentError,
)
from agentflow.errors._mcp import (
    MCPConnectionError,
    MCPError,
    MCPNotRunningError,
    MCPReconnectError,
    MCPServerStartError,
    MCPStatusError,
    MCPTimeoutError,
    MCPToolSchemaError,
)
from agentflow.errors._provider import (
    AuthenticationError,
    BadRequestError,
    BatchRequestError,
    ContentFilteredError,
    DeadlineExceededError,
    EmptyReplyError,
    ModeratedRequestError,
    NotFoundError,
    OutOfMemoryError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    QuotaExceededError,
    RateLimitedError,
    RedirectError,
    ReplyTooLargeError,
    ServerError,
    TruncatedStreamError,
    UnexpectedReplyError,
)
from agentflow.errors._root import (
    AgentflowError,
)
from agentflow.errors._run import (
    DegenerateOutputError,
    GroundingError,
    ModelRetry,
    MultipleStructuredOutputsError,
    OutputTruncatedError,
    StateConflictError,
    StrayCancelError,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolError,
    ToolRetriesExceededError,
)
from agentflow.errors._usage import (
    AlreadyDecidedError,
    ArgumentTypeError,
    ArgumentValueError,
    BatchUnavailableError,
    DuplicateInputIdError,
    InvalidChunkError,
    InvalidExampleError,
    InvalidInputError,
    InvalidModelError,
    InvalidRecordError,
    InvalidStateError,
    MediaTypeError,
    ModelArgumentError,
    ModelClosedError,
    SchemaError,
    ToolDefinitionError,
    ToolNameError,
    ToolTypeError,
    UnsupportedInputError,
    UsageError,
)

__all__ = [
    "AgentflowError",
    "AlreadyDecidedError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "AuthenticationError",
    "BadRequestError",
    "BatchRequestError",
    "BatchUnavailableError",
    "ChunkFailedError",
    "ContentFilteredError",
    "ContextLengthError",
    "CorruptDocumentError",
    "DeadlineExceededError",
    "DegenerateOutputError",
    "DocumentEncodingError",
    "DocumentError",
    "DocumentTooComplexError",
    "DuplicateInputIdError",
    "EmptyDocumentError",
    "EmptyReplyError",
    "EncryptedDocumentError",
    "GrammarEngineError",
    "GroundingError",
    "InvalidChunkError",
    "InvalidExampleError",
    "InvalidInputError",
    "InvalidInputLineError",
    "InvalidModelError",
    "InvalidRecordError",
    "InvalidStateError",
    "MCPConnectionError",
    "MCPError",
    "MCPNotRunningError",
    "MCPReconnectError",
    "MCPServerStartError",
    "MCPStatusError",
    "MCPTimeoutError",
    "MCPToolSchemaError",
    "MediaTypeError",
    "MergeConflictError",
    "MergeError",
    "ModelArgumentError",
    "ModelClosedError",
    "ModelRetry",
    "ModeratedRequestError",
    "MultipleStructuredOutputsError",
    "NoTextLayerError",
    "NotFoundError",
    "OutOfMemoryError",
    "OutputTruncatedError",
    "OverloadedError",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "QuotaExceededError",
    "RateLimitedError",
    "RedirectError",
    "ReplyTooLargeError",
    "SchemaError",
    "ServerError",
    "StateConflictError",
    "StrayCancelError",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolDefinitionError",
    "ToolError",
    "ToolNameError",
    "ToolRetriesExceededError",
    "ToolTypeError",
    "TruncatedStreamError",
    "UnexpectedReplyError",
    "UnreadableDocumentError",
    "UnsupportedFeature",
    "UnsupportedFeatureError",
    "UnsupportedInputError",
    "UsageError",
]
