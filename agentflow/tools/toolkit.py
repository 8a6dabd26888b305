"""``Toolkit``: an agent's tools, by unique name, and the ``ToolSource``s
beside them.

A ``Toolkit`` holds an agent's tools, checks names (``^[A-Za-z0-9_-]{1,64}$``,
unique) and runs tool calls. Beside tools it takes ``ToolSource``s: sets of
tools that can change while the agent lives (an MCP server's, see
``agentflow.mcp``); the toolkit reads each source's current tools when the
source's ``tools_revision`` moves, and checks the names again then: two
tools with one name are an error when the toolkit is set up (or a source
added); a name a source takes up later that another tool holds stays with
its holder, the newcomer left out and logged (``tool_name_taken``): a
server's change neither ends every later call nor takes a tool's name over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from agentflow._arguments import check_list
from agentflow._logging import get_logger
from agentflow.errors import ToolNameError, ToolTypeError
from agentflow.model import ToolSpec
from agentflow.tools.function_tool import Tool

__all__ = ["ToolLike", "ToolSource", "Toolkit"]


@runtime_checkable
class ToolSource(Protocol):
    """A set of tools that may change while an agent holds it (an MCP server's
    tools, ``agentflow.mcp.MCPServer``). Pass it in an agent's ``tools`` beside
    callables and ``Tool``s.

    ``tools_revision`` changes whenever ``current_tools()`` would return
    something else; ``refresh_tools()`` is awaited before each model request
    of a call, so a source that was told its tools changed can list them
    again first. ``current_tools()`` raises (a ``UsageError``) when the source
    cannot give its tools (an MCP server outside its ``async with``);
    ``tools_ready`` says whether it can."""

    @property
    def source_name(self) -> str:
        """The source's name, for error messages."""
        ...

    @property
    def tools_ready(self) -> bool:
        """Whether ``current_tools()`` can answer now."""
        ...

    @property
    def tools_revision(self) -> int:
        """A number that changes whenever the source's tools change."""
        ...

    def current_tools(self) -> Sequence[Tool]:
        """The tools as they are now."""
        ...

    async def refresh_tools(self) -> None:
        """Bring the tools up to date (list them again if the source was told
        they changed); cheap when nothing changed."""
        ...


_log = get_logger()

ToolLike = Tool | ToolSource | Callable[..., Any] | Callable[..., Awaitable[Any]]


class Toolkit:
    """An ordered, name-unique set of tools, and of the tools of its
    ``ToolSource``s (after its own tools, in the order given).

    A source's tools are read when the source is ready, and again each time
    its ``tools_revision`` moves; the names are checked then (unique, and by
    every check added with ``add_check``).

    Raises (at construction / ``add``, or when a source's tools are read):
        ToolDefinitionError: an item is neither a ``Tool``, a ``ToolSource``
            nor callable.
        ToolNameError: two tools share a name (naming the sources of both),
            when the sources' tools are first read; later (a source's tools
            changed), the tool that held the name keeps it.
        MCPNotRunningError (a ``UsageError``): a source's tools are needed
            while it cannot give them.
    """

    def __init__(self, tools: Iterable[ToolLike] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self.sources = self._sources
        """The tool sources, in order (read it, never change it: ``add``)."""
        self._checks: list[Callable[[Sequence[str]], None]] = []
        self._seen: tuple[int, ...] | None = None  # the sources' revisions merged into _all
        self._held: dict[str, object] | None = None  # name -> its holder at the last merge
        self._all: dict[str, Tool] = self._tools
        self._revision = 0
        check_list("tools", tools, "callables or Tools", single=(Tool, ToolSource),
                   error=ToolTypeError)
        for item in tools:
            self.add(item)

    def add(self, item: ToolLike) -> Tool | None:
        """Add a ``Tool``, a callable or a ``ToolSource``; returns the ``Tool``
        (``None`` for a source)."""
        if not isinstance(item, Tool) and isinstance(item, ToolSource):
            self._sources.append(item)
            self._seen = self._held = None
            self._revision += 1
            if item.tools_ready:
                self._merge()
            return None
        t = item if isinstance(item, Tool) else Tool.from_function(item)
        if t.name in self._tools:
            raise ToolNameError(f"duplicate tool name {t.name!r}: tool names must be unique")
        self._tools[t.name] = t
        self._revision += 1
        if self._sources:
            self._seen = self._held = None
            if all(s.tools_ready for s in self._sources):
                self._merge()
        return t

    def add_check(self, check: Callable[[Sequence[str]], None]) -> None:
        """Run ``check(names)`` now on the tools known, and again each time a
        source's tools are read (it raises to refuse a name: a reserved one)."""
        self._checks.append(check)
        check([*self._tools, *(t.name for s in self._sources if s.tools_ready
                               for t in s.current_tools())])

    @property
    def revision(self) -> int:
        """A number that changes whenever the set of tools does (a cache key of
        the specs sent); a source's tools are read first if they moved."""
        if self._sources:
            self._current()
        return self._revision

    async def refresh(self) -> None:
        """Let every source bring its tools up to date (``refresh_tools``)."""
        for source in self._sources:
            await source.refresh_tools()

    def _current(self) -> dict[str, Tool]:
        """Every tool by name: the toolkit's own, then each source's current ones."""
        seen = tuple(s.tools_revision for s in self._sources)
        if seen != self._seen:
            self._merge()
        return self._all

    def _merge(self) -> None:
        """Read every source's tools into ``_all``, in order.

        Raises:
            ToolNameError: two tools share a name, on the first read since
                the toolkit was made or a source added (``_held`` is
                ``None``); later, the tool whose source held the name at the
                last read keeps it (the first one, if neither did).
        """
        seen = tuple(s.tools_revision for s in self._sources)
        offered = [(source, t) for source in self._sources for t in source.current_tools()]
        held = self._held
        holder: dict[str, object] = dict.fromkeys(self._tools, self)
        if held is not None:  # who keeps a name two tools take: its holder, else the first
            for source, t in offered:
                if t.name not in holder or (held.get(t.name) is source
                                            and held.get(t.name) is not holder[t.name]):
                    holder[t.name] = source
        merged = dict(self._tools)
        origin: dict[str, object] = dict.fromkeys(self._tools, self)
        for source, t in offered:
            if t.name in merged or (held is not None and holder[t.name] is not source):
                keeper = origin[t.name] if t.name in origin else holder[t.name]
                if held is None:
                    raise ToolNameError(
                        f"duplicate tool name {t.name!r}: it comes from {self._where(keeper)} "
                        f"and from {self._where(source)}; tool names must be unique (filter "
                        "the tools or give the source a prefix)")
                _log.warning("tool_name_taken", tool=t.name, source=self._where(source),
                             holder=self._where(keeper))
                continue
            merged[t.name] = t
            origin[t.name] = source
        for check in self._checks:
            check(list(merged))
        self._all, self._seen, self._held = merged, seen, origin
        self._revision += 1

    def _where(self, holder: object) -> str:
        """``holder`` (a source, or this toolkit for its own tools) in a message."""
        if isinstance(holder, ToolSource):
            return f"tool source {holder.source_name!r}"
        return "the agent's own tools"

    def from_sources(self) -> frozenset[str]:
        """The names of the tools a ``ToolSource`` gave, as they are now (an MCP
        server's, which it may prefix or make valid); not the toolkit's own."""
        if not self._sources:
            return frozenset()
        self._current()
        return frozenset(n for n, holder in (self._held or {}).items() if holder is not self)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return (self._current() if self._sources else self._tools).get(name)

    @property
    def names(self) -> list[str]:
        """Tool names, in order."""
        return list(self._current() if self._sources else self._tools)

    def specs(self) -> list[ToolSpec]:
        """Every tool as the model sees it."""
        return [t.spec for t in (self._current() if self._sources else self._tools).values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter((self._current() if self._sources else self._tools).values())

    def __len__(self) -> int:
        return len(self._current() if self._sources else self._tools)

    def __contains__(self, name: object) -> bool:
        return name in (self._current() if self._sources else self._tools)
