"""Tests for agentflow.content: image and document blocks, sniffing, errors,
persistence, and the profile check before any request."""

from __future__ import annotations

import base64
import dataclasses
import pickle

import pydantic
import pytest

from agentflow import ModelProfile, ReActAgent, generate
from agentflow.content import (
    DocumentBlock,
    ImageBlock,
    check_inputs,
    modality,
    sniff_media_type,
)
from agentflow.errors import (
    InvalidInputError,
    InvalidStateError,
    MediaTypeError,
    UnsupportedInputError,
)
from agentflow.messages import Msg, TextBlock, msg_from_dict, msg_to_dict
from agentflow.state import AgentState
from agentflow.testing import ScriptedModel
from tests import media

VISION = ModelProfile(input_modalities={"text", "image", "pdf"},
                      url_input_modalities={"image", "pdf"})

# ----------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(("data", "expected"), [
    (media.png(), "image/png"),
    (media.JPEG, "image/jpeg"),
    (media.GIF, "image/gif"),
    (media.WEBP, "image/webp"),
    (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", "image/heic"),
    (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00", "image/heif"),
    (b"II*\x00\x08\x00\x00\x00", "image/tiff"),
    (b"BM" + b"\x00" * 40, "image/bmp"),
    (media.pdf(), "application/pdf"),
    (b"\xef\xbb\xbf\r\n%PDF-1.7\n", "application/pdf"),  # junk before the header
    (b"plain text", None),
    (b"", None),
])
def test_sniff_media_type(data: bytes, expected: str | None) -> None:
    assert sniff_media_type(data) == expected


# ----------------------------------------------------------------------------- construction


def test_from_bytes_sniffs_and_holds_the_bytes_once() -> None:
    data = media.png()
    block = ImageBlock.from_bytes(data)
    assert block.media_type == "image/png"
    assert block.data is data  # not copied
    assert block.url is None
    assert modality(block) == "image"


@pytest.mark.parametrize("given", ["image/png", "IMAGE/PNG", "image/png; charset=binary",
                                   "image/x-png"])
def test_given_media_type_is_normalized(given: str) -> None:
    assert ImageBlock.from_bytes(media.png(), given).media_type == "image/png"


def test_jpg_alias() -> None:
    assert ImageBlock.from_bytes(media.JPEG, "image/jpg").media_type == "image/jpeg"


def test_from_bytes_accepts_bytearray_and_memoryview() -> None:
    data = media.png()
    assert ImageBlock.from_bytes(bytearray(data)).data == data
    assert ImageBlock.from_bytes(memoryview(data)).data == data


def test_from_path_reads_at_once(tmp_path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(media.pdf(pages=2))
    block = DocumentBlock.from_path(path)
    path.unlink()  # the block does not need the file any more
    assert block.media_type == "application/pdf"
    assert block.filename == "scan.pdf"
    assert block.data == media.pdf(pages=2)
    assert modality(block) == "pdf"
    image = tmp_path / "a.png"
    image.write_bytes(media.png())
    assert ImageBlock.from_path(str(image)).media_type == "image/png"


def test_from_path_missing_file(tmp_path) -> None:
    with pytest.raises(OSError):
        ImageBlock.from_path(tmp_path / "missing.png")


def test_from_base64_keeps_the_text_as_its_encoding() -> None:
    text = base64.b64encode(media.png()).decode()
    block = ImageBlock.from_base64(text)
    assert block.data == media.png()
    assert block.base64 is text  # no re-encoding


def test_from_base64_takes_mime_line_breaks_and_data_urls() -> None:
    wrapped = base64.encodebytes(media.png(pad=200)).decode()  # a newline every 76 chars
    assert "\n" in wrapped
    block = ImageBlock.from_base64(wrapped)
    assert block.data == media.png(pad=200)
    assert block.base64 == base64.b64encode(media.png(pad=200)).decode()
    text = base64.b64encode(media.pdf()).decode()
    doc = DocumentBlock.from_base64(f"data:application/pdf;base64,{text}", filename="a.pdf")
    assert (doc.data, doc.filename) == (media.pdf(), "a.pdf")


def test_from_base64_malformed() -> None:
    with pytest.raises(InvalidInputError, match="base64"):
        ImageBlock.from_base64("not base64!!")


def test_base64_is_encoded_once() -> None:
    block = DocumentBlock.from_bytes(media.pdf())
    first = block.base64
    assert base64.b64decode(first) == media.pdf()
    assert block.base64 is first


def test_from_url_guesses_media_type_and_redacts_in_repr() -> None:
    block = ImageBlock.from_url("https://cdn.example.com/cat.jpg?X-Amz-Signature=s3cr3t")
    assert block.media_type == "image/jpeg"
    assert block.url == "https://cdn.example.com/cat.jpg?X-Amz-Signature=s3cr3t"
    assert "s3cr3t" not in repr(block)
    assert "cdn.example.com/cat.jpg" in repr(block)
    doc = DocumentBlock.from_url("https://example.com/papers/report.pdf")
    assert (doc.media_type, doc.filename) == ("application/pdf", "report.pdf")


def test_from_url_without_extension_needs_media_type() -> None:
    with pytest.raises(MediaTypeError, match="media_type="):
        ImageBlock.from_url("https://example.com/image?id=3")
    assert ImageBlock.from_url("https://example.com/image?id=3", "image/webp").media_type == \
        "image/webp"


def test_from_data_url_decodes_bytes() -> None:
    text = base64.b64encode(media.png()).decode()
    block = ImageBlock.from_url(f"data:image/png;base64,{text}")
    assert block.data == media.png()
    assert block.url is None
    assert block.base64 == text


def test_data_url_with_wrong_declared_type() -> None:
    text = base64.b64encode(media.png()).decode()
    with pytest.raises(MediaTypeError, match="image/png"):
        ImageBlock.from_url(f"data:image/jpeg;base64,{text}")


def test_url_block_has_no_base64() -> None:
    with pytest.raises(InvalidInputError, match="URL"):
        _ = ImageBlock.from_url("https://example.com/a.png").base64


@pytest.mark.parametrize("url", ["ftp://example.com/a.png", "file:///etc/passwd.png", "a.png"])
def test_url_scheme_refused(url: str) -> None:
    with pytest.raises(InvalidInputError, match="http"):
        ImageBlock.from_url(url)


# ----------------------------------------------------------------------------- errors


def test_unknown_bytes_refused() -> None:
    with pytest.raises(MediaTypeError, match="unknown type") as info:
        ImageBlock.from_bytes(b"hello world, not an image")
    assert isinstance(info.value, InvalidInputError)


def test_mismatched_media_type_refused() -> None:
    with pytest.raises(MediaTypeError, match="'image/jpeg' was given but the bytes are image/png"):
        ImageBlock.from_bytes(media.png(), "image/jpeg")


def test_pdf_is_not_an_image() -> None:
    with pytest.raises(MediaTypeError, match="application/pdf"):
        ImageBlock.from_bytes(media.pdf())
    with pytest.raises(MediaTypeError, match="image/png"):
        DocumentBlock.from_bytes(media.png())


def test_unknown_media_type_named() -> None:
    with pytest.raises(MediaTypeError, match="image/x-foo") as info:
        ImageBlock.from_bytes(media.png(), "image/x-foo")
    assert info.value.media_type == "image/x-foo"


def test_exactly_one_source() -> None:
    with pytest.raises(InvalidInputError, match="exactly one source"):
        ImageBlock("image/png")
    with pytest.raises(InvalidInputError, match="exactly one source"):
        ImageBlock("image/png", data=media.png(), url="https://example.com/a.png")


def test_data_must_be_bytes() -> None:
    with pytest.raises(InvalidInputError, match="bytes"):
        ImageBlock("image/png", data="iVBOR")  # type: ignore[arg-type]


def test_blocks_are_frozen_hashable_and_picklable() -> None:
    block = ImageBlock.from_bytes(media.png())
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.media_type = "image/gif"  # type: ignore[misc]
    assert block == ImageBlock.from_bytes(media.png())
    assert hash(block) == hash(ImageBlock.from_bytes(media.png()))
    _ = block.base64
    assert pickle.loads(pickle.dumps(block)) == block


def test_repr_never_holds_the_bytes() -> None:
    block = DocumentBlock.from_bytes(media.pdf(pages=3), filename="q.pdf")
    assert repr(block) == (f"DocumentBlock(media_type='application/pdf', "
                           f"data=<{len(block.data or b'')} bytes>, filename='q.pdf')")


# ----------------------------------------------------------------------------- messages


def test_msg_holds_blocks_and_strings() -> None:
    image = ImageBlock.from_bytes(media.png())
    doc = DocumentBlock.from_bytes(media.pdf())
    msg = Msg.user(["Compare these.", image, doc])
    assert msg.content == (TextBlock("Compare these."), image, doc)
    assert msg.text == "Compare these."
    assert msg.media == [image, doc]


def test_msg_still_refuses_other_objects() -> None:
    with pytest.raises(InvalidInputError, match="ImageBlock, DocumentBlock"):
        Msg("user", [b"raw bytes"])  # type: ignore[list-item]


def test_round_trip_through_agent_state_json() -> None:
    memory = [
        Msg.user(["Read", ImageBlock.from_bytes(media.png(pad=3000)),
                  DocumentBlock.from_bytes(media.pdf(pages=2), filename="r.pdf"),
                  ImageBlock.from_url("https://example.com/x.webp?sig=1"),
                  DocumentBlock.from_url("https://example.com/doc.pdf")]),
        Msg.assistant("Done."),
    ]
    state = AgentState(memory)
    raw = state.to_json()
    restored = AgentState.from_json(raw)
    assert restored == state
    blocks = restored.memory[0].content
    assert blocks[1].data == media.png(pad=3000)
    assert isinstance(blocks[2], DocumentBlock) and blocks[2].filename == "r.pdf"
    # bytes are stored as base64 and the decoded block keeps that text (no re-encode)
    stored = msg_to_dict(state.memory[0])["content"][1]
    assert stored == {"type": "image", "media_type": "image/png",
                      "data": base64.b64encode(media.png(pad=3000)).decode()}
    assert blocks[1].base64 == stored["data"]
    assert AgentState.from_json(restored.to_json()) == state


def test_msg_dict_round_trip_of_a_url_block() -> None:
    msg = Msg.user([DocumentBlock.from_url("https://example.com/a.pdf", filename="A")])
    data = msg_to_dict(msg)
    assert data["content"][0] == {"type": "document", "media_type": "application/pdf",
                                  "url": "https://example.com/a.pdf", "filename": "A"}
    assert msg_from_dict(data) == msg


def test_stored_block_with_bad_bytes_is_a_validation_error() -> None:
    data = msg_to_dict(Msg.user([ImageBlock.from_bytes(media.png())]))
    data["content"][0]["data"] = base64.b64encode(b"not an image").decode()
    with pytest.raises(pydantic.ValidationError, match="unknown type"):
        msg_from_dict(data)
    state = {"version": 1, "memory": [data], "so_tool_active": False}
    with pytest.raises(InvalidStateError):
        AgentState.from_dict(state)


# ----------------------------------------------------------------------------- profile check


def test_profile_defaults_to_text_only() -> None:
    assert ModelProfile().input_modalities == frozenset({"text"})
    assert VISION.input_modalities == frozenset({"text", "image", "pdf"})


def test_check_names_model_and_modality() -> None:
    msgs = [Msg.user(["x", DocumentBlock.from_bytes(media.pdf())])]
    with pytest.raises(UnsupportedInputError, match="'m-1' does not accept pdf input") as info:
        check_inputs(msgs, ModelProfile(input_modalities={"text", "image"}), "m-1")
    assert (info.value.model, info.value.modality) == ("m-1", "pdf")
    check_inputs(msgs, VISION, "m-1")


def test_check_url_sources() -> None:
    msgs = [Msg.user([ImageBlock.from_url("https://example.com/a.png")])]
    with pytest.raises(UnsupportedInputError, match="does not fetch image input from a URL"):
        check_inputs(msgs, VISION.with_(url_input_modalities=()), "m")
    check_inputs(msgs, VISION, "m")


def test_check_image_media_types() -> None:
    msgs = [Msg.user([ImageBlock.from_bytes(b"II*\x00\x08\x00\x00\x00")])]
    with pytest.raises(UnsupportedInputError, match="image/tiff"):
        check_inputs(msgs, VISION, "m")
    check_inputs(msgs, VISION.with_(image_media_types={"image/tiff"}), "m")


def test_check_sizes() -> None:
    big = ImageBlock.from_bytes(media.png(pad=2000))
    with pytest.raises(UnsupportedInputError, match="image too large"):
        check_inputs([Msg.user([big])], VISION.with_(max_image_bytes=1000), "m")
    doc = DocumentBlock.from_bytes(media.pdf(pages=20))
    with pytest.raises(UnsupportedInputError, match="pdf too large"):
        check_inputs([Msg.user([doc])], VISION.with_(max_document_bytes=100), "m")
    two = [Msg.user([big]), Msg.user([big])]
    limit = 4 * ((len(big.data or b"") + 2) // 3)
    check_inputs(two[:1], VISION.with_(max_inline_bytes=limit), "m")
    with pytest.raises(UnsupportedInputError, match="inline content too large"):
        check_inputs(two, VISION.with_(max_inline_bytes=limit), "m")


async def test_agent_refuses_before_any_request() -> None:
    state = AgentState()
    model = ScriptedModel(["never"], name="text-only-1")
    agent = ReActAgent(name="a", model=model)
    msg = Msg.user(["What is this?", ImageBlock.from_bytes(media.png())])
    with pytest.raises(UnsupportedInputError, match="'text-only-1' does not accept image"):
        await agent.call(msg, state=state)
    assert model.requests == []
    assert state.memory == []  # nothing stored


async def test_agent_refuses_blocks_already_in_state() -> None:
    model = ScriptedModel(["never"], name="text-only-2")
    agent = ReActAgent(name="a", model=model)
    state = AgentState([Msg.user([DocumentBlock.from_bytes(media.pdf())])])
    with pytest.raises(UnsupportedInputError, match="pdf"):
        await agent.call("and now?", state=state)
    assert model.requests == []


async def test_agent_sends_blocks_the_profile_accepts() -> None:
    model = ScriptedModel(["a grey square"], profile=VISION)
    agent = ReActAgent(name="a", model=model)
    image = ImageBlock.from_bytes(media.png())
    reply = await agent.call(Msg.user(["What is this?", image]))
    assert reply.text == "a grey square"
    assert model.requests[0].messages[-1].content[1] is image


async def test_generate_checks_too() -> None:
    model = ScriptedModel(["x"])
    with pytest.raises(UnsupportedInputError):
        await generate(model, [Msg.user([ImageBlock.from_bytes(media.png())])])
    assert model.requests == []
