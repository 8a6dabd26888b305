"""A field whose value still cannot be placed in the document after the
retries: the record keeps its other fields, the field null, flagged and
named with why (``agentflow.extraction.dropped``; the newcomer's probe lost a
BibTeX entry's right key, title and year for one journal value ``arXiv:},``
+ newline, and a NEWS file's every field for a first change ``agent: Fix
regression ...`` the label check refused). By default only a value the
document writes, refused for its place or edges, is dropped so; an invented
one fails the record unless ``allow_partial``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.errors import GroundingError
from agentflow.extraction._report_fields import field_notes
from agentflow.extraction.budget import Chunking
from agentflow.extraction.confidence import REVIEW_BELOW
from agentflow.extraction.dropped import DROPPED
from agentflow.extraction.records import to_record
from agentflow.grounding import Grounded, check_grounding, grounded_values
from agentflow.output.examples import Example
from agentflow.testing import FunctionModel

DOC = "@article{smith2023,\n  title = {Tidal Models},\n  year = {2023},\n}\n"


class Entry(BaseModel):
    key: str
    title: str | None = None
    year: str | None = None
    journal: str | None = None


async def _run(answer: dict[str, Any], output: type[BaseModel] = Entry, **options: Any) -> Any:
    model = FunctionModel(lambda request: json.dumps(answer))
    (result,) = [r async for r in extract_many(model, [DOC], output, **options)]
    return result


ANSWER = {"key": "smith2023", "title": "Tidal Models", "year": "2023",
          "journal": "Journal of Tides"}  # not in the document, at every retry


async def test_by_default_the_record_fails_whole() -> None:
    result = await _run(ANSWER)
    assert not result.ok and isinstance(result.error, GroundingError)


async def test_under_allow_partial_the_field_is_dropped_flagged_and_named() -> None:
    result = await _run(ANSWER, allow_partial=True)
    assert result.ok and result.output.journal is None
    assert result.output.title == "Tidal Models" and result.output.key == "smith2023"
    assert set(result.spans) >= {"key", "title", "year"} and "journal" not in result.spans
    assert result.confidence["journal"] == DROPPED < REVIEW_BELOW
    assert "journal" in result.needs_review
    assert "not found in the document" in result.dropped["journal"]
    record = to_record(result)
    assert record["ok"] and record["dropped"] == result.dropped
    note = field_notes(record)["journal"]
    assert note.flagged and "could not be placed" in note.why


async def test_a_field_that_may_not_be_null_still_fails_the_record() -> None:
    result = await _run({**ANSWER, "key": "jones2020"}, allow_partial=True)
    assert not result.ok and isinstance(result.error, GroundingError)


async def test_a_chunked_document_drops_only_what_no_chunk_placed() -> None:
    """Each chunk's unplaceable fields are dropped in that chunk; the record
    names those no chunk placed (``key`` is placed by the first chunk only)."""
    text = DOC + "\n" + "Notes: the tidal models were run twice over the summer.\n" * 3
    model = FunctionModel(lambda request: json.dumps(ANSWER))
    (long,) = [r async for r in extract_many(model, [text], Entry, allow_partial=True,
                                             chunking=Chunking(max_chars=80))]
    assert long.ok and long.chunks is not None and long.chunks.total > 1
    assert long.output.key == "smith2023" and long.output.journal is None
    assert set(long.dropped) == {"journal"} and "journal" in long.needs_review


NEWS = ("Noteworthy changes in version 2.2.40 (2022-10-10)\n"
        "-------------------------------------------------\n\n"
        "  * agent: Fix regression in 2.2.37 related to non-extended format\n"
        "    private keys.  [T6176]\n")


class Release(BaseModel):
    version: str | None = None
    release_date: str | None = None
    first_change: str | None = None


RELEASE = {"version": "2.2.40", "release_date": "2022-10-10",
           "first_change": "agent: Fix regression in 2.2.37 related to non-extended format"}


async def _news(answer: dict[str, Any], **options: Any) -> Any:
    model = FunctionModel(lambda request: json.dumps(answer))
    (result,) = [r async for r in extract_many(model, [NEWS], Release, **options)]
    return result


async def test_by_default_a_written_value_a_check_refuses_drops_its_field_only() -> None:
    """``agent: Fix ...`` is in the document; the clean-edge check refuses it
    (a label at its line's start) at every retry: the field is dropped, the
    version and date stay."""
    result = await _news(RELEASE)
    assert result.ok, result.error
    assert result.output == Release(version="2.2.40", release_date="2022-10-10")
    assert result.dropped == {
        "first_change": "'agent: Fix regression in 2.2.37 related to non-extended format' "
                        "begins with the label 'agent:' of its line"}
    assert result.confidence["first_change"] == DROPPED and "first_change" in result.needs_review


async def test_by_default_an_invented_value_beside_a_refused_one_fails_the_record() -> None:
    result = await _news({**RELEASE, "version": "2.2.41"})
    assert not result.ok and isinstance(result.error, GroundingError)
    assert result.error.refused == ["first_change"]
    assert {p for p, _ in result.error.unfound} == {"version", "first_change"}
    partial = await _news({**RELEASE, "version": "2.2.41"}, allow_partial=True)
    assert partial.ok and set(partial.dropped) == {"version", "first_change"}


def test_refused_names_the_values_the_document_writes() -> None:
    marker = Grounded(whole_tokens=True, clean=True)
    value = Release(version="2.2", release_date="2022-10-10",
                    first_change="agent: Fix regression")
    check = check_grounding(grounded_values(value, Release, marker), NEWS)
    assert {p for p, _ in check.unfound} == {"version", "first_change"}  # 2.2 cuts 2.2.40
    assert check.refused == ["version", "first_change"]
    invented = Release(first_change="Fix the build")
    assert check_grounding(grounded_values(invented, Release, marker), NEWS).refused == []


class Install(BaseModel):
    install_command: str | None = None
    package: str | None = None
    title: str


README = "# httplib2\n\nInstallation\n------------\n\nSee the file INSTALL for the details.\n"
EXAMPLES = [Example("# tiny-url-slug\n\n## Install\n\n    npm install tiny-url-slug\n",
                    {"install_command": "npm install tiny-url-slug", "package": "tiny-url-slug",
                     "title": "tiny-url-slug"})]


async def _readme(answer: dict[str, Any], **options: Any) -> Any:
    model = FunctionModel(lambda request: json.dumps(answer))
    (result,) = [r async for r in extract_many(model, [README], Install, examples=EXAMPLES,
                                               **options)]
    return result


async def test_an_examples_value_the_document_does_not_write_drops_its_field_only() -> None:
    """The model wrote an example's values (not in the document) at every
    retry (the probe's node-gyp and idna READMEs): those fields are dropped,
    named as the example's, and the record keeps its other fields."""
    result = await _readme({"install_command": "npm install tiny-url-slug",
                            "package": "tiny-url-slug", "title": "httplib2"})
    assert result.ok, result.error
    assert result.output == Install(title="httplib2")
    assert set(result.dropped) == {"install_command", "package"}
    assert "an example's value" in result.dropped["package"]
    assert result.confidence["package"] == DROPPED and "package" in result.needs_review


async def test_an_invented_value_or_an_examples_value_for_a_required_field_still_fails() -> None:
    invented = await _readme({"install_command": "pip install httplib3", "package": None,
                              "title": "httplib2"})
    assert not invented.ok and isinstance(invented.error, GroundingError)
    required = await _readme({"install_command": None, "package": None,
                              "title": "tiny-url-slug"})
    assert not required.ok and isinstance(required.error, GroundingError)


async def test_a_chunk_that_copies_an_examples_value_keeps_the_record() -> None:
    """The probe's node-gyp README (two chunks): a chunk's copied example
    value no longer fails the chunk, nor the record."""
    text = README + "\n" + "Usage: run the tool on the project's directory.\n" * 3
    model = FunctionModel(lambda request: json.dumps(
        {"install_command": "npm install tiny-url-slug", "package": None, "title": None}))
    (long,) = [r async for r in extract_many(model, [text], Optional, examples=OPTIONAL,
                                             chunking=Chunking(max_chars=90))]
    assert long.ok, long.error
    assert long.chunks is not None and long.chunks.total > 1 and long.chunks.failed == 0
    assert long.output == Optional() and "install_command" in long.needs_review
    assert "an example's value" in long.dropped["install_command"]


class Optional(BaseModel):
    install_command: str | None = None
    package: str | None = None
    title: str | None = None


OPTIONAL = [Example(e.text, Optional(**e.output)) for e in EXAMPLES]
