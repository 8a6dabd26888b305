"""agentflow: an async-first reactive agent framework whose headline capability
is structured output that works on every LLM provider.

    agent = ReActAgent("extractor", model, tools=[lookup])
    reply = await agent.call("Extract the contact from: ...", Contact)
    contact = reply.output
"""

from typing import TYPE_CHECKING, Any

from agentflow._version import __version__ as __version__
from agentflow.agent import ReActAgent
from agentflow.documents.deferred import DeferredDocument
from agentflow.errors import (
    AgentflowError,
    AlreadyDecidedError,
    ArgumentTypeError,
    ArgumentValueError,
    AuthenticationError,
    BadRequestError,
    BatchRequestError,
    BatchUnavailableError,
    ChunkFailedError,
    ContentFilteredError,
    ContextLengthError,
    CorruptDocumentError,
    DeadlineExceededError,
    DegenerateOutputError,
    DocumentEncodingError,
    DocumentError,
    DocumentTooComplexError,
    DuplicateInputIdError,
    EmptyDocumentError,
    EmptyReplyError,
    EncryptedDocumentError,
    GrammarEngineError,
    GroundingError,
    InvalidChunkError,
    InvalidExampleError,
    InvalidInputError,
    InvalidInputLineError,
    InvalidModelError,
    InvalidRecordError,
    InvalidStateError,
    MediaTypeError,
    MergeConflictError,
    MergeError,
    ModelClosedError,
    ModelRetry,
    ModeratedRequestError,
    MultipleStructuredOutputsError,
    NoTextLayerError,
    NotFoundError,
    OutOfMemoryError,
    OutputTruncatedError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    QuotaExceededError,
    RateLimitedError,
    RedirectError,
    ReplyTooLargeError,
    SchemaError,
    ServerError,
    StateConflictError,
    StrayCancelError,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolDefinitionError,
    ToolError,
    ToolNameError,
    ToolRetriesExceededError,
    ToolTypeError,
    TruncatedStreamError,
    UnexpectedReplyError,
    UnreadableDocumentError,
    UnsupportedFeatureError,
    UnsupportedInputError,
    UsageError,
)
from agentflow.events import (
    AttemptDiscarded,
    CallStarted,
    Complete,
    Event,
    OutputPartial,
    OutputRetry,
    ReasoningChunk,
    ThinkingChunk,
    ToolProgress,
    ToolResult,
    ToolUse,
    TypedEvent,
)
from agentflow.execution import CallExecution
from agentflow.extraction.budget import Chunking
from agentflow.extraction.merge import Merge
from agentflow.grounding import Grounded
from agentflow.grounding.marker import Derived
from agentflow.media.tokens import AreaImages, GridImages, MediaTokens, TiledImages
from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT,
    STRUCTURED_OUTPUT_ATTEMPT,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    DocumentBlock,
    ImageBlock,
    Msg,
    ReminderType,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.middleware.base import Act, Finish, Middleware, ModelRequest, ReasonAgain
from agentflow.model import (
    ChatModel,
    GenerateOptions,
    ModelProfile,
    ResponseFormat,
    ToolChoice,
    ToolSpec,
    Usage,
)
from agentflow.output.config import OutputConfig
from agentflow.output.examples import Example
from agentflow.output.json_schema import json_schema_output
from agentflow.output.strategies import (
    AutoStrategy,
    NativeStrategy,
    PromptStrategy,
    StructuredOutputReminder,
    ToolStrategy,
)
from agentflow.ratelimit import RateGovernor, RateLimitSnapshot, request_priority
from agentflow.reply import generate
from agentflow.state import AgentState
from agentflow.sync import extract_many_sync
from agentflow.tools import Tool, Toolkit, ToolSource, tool

if TYPE_CHECKING:  # imported on first use (below): the batch layer is not loaded by import
    from agentflow.batch import ExtractResult, extract_many

_LAZY = {"extract_many": "agentflow.batch", "ExtractResult": "agentflow.batch"}


def __getattr__(name: str) -> Any:
    """``extract_many`` and ``ExtractResult``, imported from ``agentflow.batch`` on
    first use (``import agentflow`` does not load the batch layer)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentflow' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "CACHE_CONTROL",
    "STRUCTURED_OUTPUT",
    "STRUCTURED_OUTPUT_ATTEMPT",
    "STRUCTURED_OUTPUT_REMINDER",
    "STRUCTURED_OUTPUT_REMINDER_TYPE",
    "Act",
    "AgentState",
    "AgentflowError",
    "AlreadyDecidedError",
    "AreaImages",
    "ArgumentTypeError",
    "ArgumentValueError",
    "AttemptDiscarded",
    "AuthenticationError",
    "AutoStrategy",
    "BadRequestError",
    "BatchRequestError",
    "BatchUnavailableError",
    "CallExecution",
    "CallStarted",
    "ChatModel",
    "ChunkFailedError",
    "Chunking",
    "Complete",
    "ContentFilteredError",
    "ContextLengthError",
    "CorruptDocumentError",
    "DeadlineExceededError",
    "DeferredDocument",
    "DegenerateOutputError",
    "Derived",
    "DocumentBlock",
    "DocumentEncodingError",
    "DocumentError",
    "DocumentTooComplexError",
    "DuplicateInputIdError",
    "EmptyDocumentError",
    "EmptyReplyError",
    "EncryptedDocumentError",
    "Event",
    "Example",
    "ExtractResult",
    "Finish",
    "GenerateOptions",
    "GrammarEngineError",
    "GridImages",
    "Grounded",
    "GroundingError",
    "ImageBlock",
    "InvalidChunkError",
    "InvalidExampleError",
    "InvalidInputError",
    "InvalidInputLineError",
    "InvalidModelError",
    "InvalidRecordError",
    "InvalidStateError",
    "MediaTokens",
    "MediaTypeError",
    "Merge",
    "MergeConflictError",
    "MergeError",
    "Middleware",
    "ModelClosedError",
    "ModelProfile",
    "ModelRequest",
    "ModelRetry",
    "ModeratedRequestError",
    "Msg",
    "MultipleStructuredOutputsError",
    "NativeStrategy",
    "NoTextLayerError",
    "NotFoundError",
    "OutOfMemoryError",
    "OutputConfig",
    "OutputPartial",
    "OutputRetry",
    "OutputTruncatedError",
    "OverloadedError",
    "PermissionDeniedError",
    "PromptStrategy",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "QuotaExceededError",
    "RateGovernor",
    "RateLimitSnapshot",
    "RateLimitedError",
    "ReActAgent",
    "ReasonAgain",
    "ReasoningChunk",
    "RedirectError",
    "ReminderType",
    "ReplyTooLargeError",
    "ResponseFormat",
    "SchemaError",
    "ServerError",
    "StateConflictError",
    "StrayCancelError",
    "StructuredOutputError",
    "StructuredOutputReminder",
    "StructuredOutputValidationError",
    "TextBlock",
    "ThinkingBlock",
    "ThinkingChunk",
    "TiledImages",
    "Tool",
    "ToolChoice",
    "ToolDefinitionError",
    "ToolError",
    "ToolNameError",
    "ToolProgress",
    "ToolResult",
    "ToolResultBlock",
    "ToolRetriesExceededError",
    "ToolSource",
    "ToolSpec",
    "ToolStrategy",
    "ToolTypeError",
    "ToolUse",
    "ToolUseBlock",
    "Toolkit",
    "TruncatedStreamError",
    "TypedEvent",
    "UnexpectedReplyError",
    "UnreadableDocumentError",
    "UnsupportedFeatureError",
    "UnsupportedInputError",
    "Usage",
    "UsageError",
    "__version__",
    "extract_many",
    "extract_many_sync",
    "generate",
    "json_schema_output",
    "request_priority",
    "tool",
]
