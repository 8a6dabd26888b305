"""Bytes -> text (agentflow.documents.encoding): BOM, declaration, UTF-8, detection,
each strict; an unknown or lying declaration is overruled and logged; bytes nothing
reads are a typed error naming the file and the encoding; never U+FFFD in silence."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentflow import DocumentEncodingError
from agentflow.documents import html_to_text, load_document
from agentflow.documents.encoding import codec_for_label, decode_bytes, decode_text
from agentflow.documents.encoding_labels import LABELS, REPLACEMENT_LABELS
from agentflow.documents.inputs import iter_documents

RUSSIAN = "Привет, мир. Съешь же ещё этих мягких французских булок, да выпей чаю."
BODY = f"<p>{RUSSIAN}</p>"


@pytest.mark.parametrize(("label", "codec"), [
    ("UTF-8", "utf-8"), ("windows-1251", "cp1251"), ("koi8-r", "koi8-r"),
    ("iso-8859-1", "cp1252"), ("latin1", "cp1252"), ("ascii", "cp1252"),   # WHATWG meanings
    ("gb2312", "gbk"), ("shift_jis", "cp932"), ("euc-kr", "cp949"), ("utf-16", "utf-8"),
    (" 'Windows-1252' ", "cp1252"),
    ("x-bogus", None), ("base64", None), ("rot13", None), ("", None),     # not text encodings
])
def test_labels_are_read_as_the_encoding_standard_says(label: str, codec: str | None) -> None:
    assert codec_for_label(label) == codec


@pytest.mark.parametrize("page", [
    ("<meta charset='x-bogus'>" + BODY).encode("cp1251"),          # unknown label
    ("<meta charset='utf-8'>" + BODY).encode("cp1251"),            # lies: bytes are cp1251
    ("<meta charset='koi8-r'>" + BODY).encode("utf-8"),            # lies: bytes are UTF-8
    ("<meta charset='iso-8859-1'>" + BODY).encode("utf-8"),
    ('<meta http-equiv="Content-Type" content="text/html; charset=bogus">' + BODY
     ).encode("cp1251"),
])
def test_an_unknown_or_lying_meta_charset_never_gives_mojibake(
        page: bytes, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="agentflow.documents"):
        text = html_to_text(page, name="page.html")
    assert text == RUSSIAN
    assert "page.html" in caplog.text  # overruled or detected: said, with the file named


@pytest.mark.parametrize("label", [
    "utf-7", "UTF7", "unicode_escape", "raw_unicode_escape", "cp037", "utf-32", "idna",
    "latin-1", "utf_8",                                   # Python's aliases: no WHATWG label
    *sorted(REPLACEMENT_LABELS),                          # the replacement encoding's
])
def test_a_label_the_encoding_standard_does_not_list_names_no_encoding(label: str) -> None:
    assert codec_for_label(label) is None


def test_every_label_of_the_standard_names_a_python_codec() -> None:
    assert len(LABELS) + len(REPLACEMENT_LABELS) == 228  # encodings.json's labels
    assert {LABELS[k] for k in ("x-user-defined", "koi8-ru", "unicodefffe", "logical")} == {
        "cp1252", "koi8-u", "utf-8", "iso8859-8"}


@pytest.mark.parametrize(("page", "text"), [
    # UTF-7 is no encoding to a browser: the markup it hides stays text, never a script
    (b'<meta charset="utf-7"><p>Total +ADw-script+AD4-alert(1)+ADw-/script+AD4- 5</p>',
     "Total +ADw-script+AD4-alert(1)+ADw-/script+AD4- 5"),
    (b'<meta http-equiv="Content-Type" content="text/html; charset=UTF-7">'
     b"<p>+ADw-b+AD4-x+ADw-/b+AD4-</p>", "+ADw-b+AD4-x+ADw-/b+AD4-"),
    (b'<meta charset="unicode_escape"><p>a \\x3cscript\\x3eb\\x3c/script\\x3e</p>',
     "a \\x3cscript\\x3eb\\x3c/script\\x3e"),
    (b'<meta charset="iso-2022-kr"><p>plain</p>', "plain"),
    # an unknown label is passed over for a later <meta>'s, as the prescan does
    (b'<meta charset="utf-7"><meta charset="koi8-r">' + BODY.encode("koi8-r"),
     RUSSIAN),
])
def test_a_page_declaring_an_encoding_the_standard_lacks_is_read_as_undeclared(
        page: bytes, text: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="agentflow.documents"):
        assert html_to_text(page, name="page.html") == text
    # said, with the file named (unless a later <meta> named a known encoding)
    assert ("unknown_declared_encoding" in caplog.text) is (text != RUSSIAN)
    assert text == RUSSIAN or "page.html" in caplog.text


def test_a_truthful_declaration_is_followed() -> None:
    page = ("<meta charset='koi8-r'>" + BODY).encode("koi8-r")
    assert html_to_text(page) == RUSSIAN
    assert decode_bytes(page, declared="koi8-r").source == "declared"


@pytest.mark.parametrize(("raw", "encoding"), [
    (b"\xef\xbb\xbf" + RUSSIAN.encode("cp1251"), "utf-8"),   # the BOM says UTF-8: it is not
    (b"\xff\xfe" + "ab".encode("utf-16-le") + b"x", "utf-16"),  # UTF-16 cut mid-unit
    (RUSSIAN.encode() + b"\xff" + RUSSIAN.encode(), "utf-8"),  # damaged UTF-8, nothing reads it
])
def test_bytes_nothing_reads_are_a_typed_error_naming_file_and_encoding(
        raw: bytes, encoding: str, tmp_path: Path) -> None:
    for reader in (lambda: html_to_text(raw, name="in.html"),
                   lambda: load_document(raw, name="in.txt", kind="text")):
        with pytest.raises(DocumentEncodingError) as info:
            reader()
        assert info.value.encoding.startswith(encoding) and info.value.path.startswith("in.")
        assert info.value.path in str(info.value) and "offset" in info.value.reason
    (tmp_path / "in.txt").write_bytes(raw)
    [doc] = iter_documents([str(tmp_path / "in.txt")])
    assert doc.problem_type == "DocumentEncodingError" and "in.txt" in (doc.problem or "")
    assert not doc.text


def test_a_lone_high_byte_at_the_end_of_ascii_is_not_a_cut_utf8_character() -> None:
    decoded = decode_bytes("Le café".encode("cp1252"))
    assert "\ufffd" not in decoded.text and decoded.source == "detected"


def test_a_utf8_file_cut_mid_character_keeps_its_text(caplog: pytest.LogCaptureFixture) -> None:
    raw = (RUSSIAN + "ё").encode()[:-1]
    with caplog.at_level(logging.WARNING, logger="agentflow.documents"):
        assert decode_bytes(raw, name="cut.txt").text == RUSSIAN + "\ufffd"
    assert "cut_last_character" in caplog.text and "cut.txt" in caplog.text


def test_detection_never_guesses_utf16_without_a_bom() -> None:
    assert decode_bytes(b"caf\xe9").encoding not in ("utf_16_be", "utf_16_le", "utf_16")


def test_legacy_text_without_declaration_is_detected(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="agentflow.documents"):
        assert decode_text((RUSSIAN * 5).encode("cp1251"), name="old.txt") == RUSSIAN * 5
    assert "encoding_detected" in caplog.text and "cp1251" in caplog.text


@pytest.mark.parametrize("text", [
    "François Müller, Société Générale\n",
    "Name: Grâce Müller\nCompany: Société Générale, Paris\n",
    "Ärger über Öl und Straße.\n",
])
def test_short_western_text_is_read_as_windows_1252_not_a_rarer_code_page(
        text: str, caplog: pytest.LogCaptureFixture) -> None:
    """Short Latin-1 text reads without a flaw in several single-byte code pages
    (cp1250, cp1257, cp775); the tie goes to windows-1252, the WHATWG default,
    and the guess is logged as a warning naming the file and the encoding."""
    raw = text.encode("latin-1")
    with caplog.at_level(logging.WARNING, logger="agentflow.documents"):
        assert decode_text(raw, name="latin1.txt") == text
    assert "encoding_detected" in caplog.text and "cp1252" in caplog.text
    page = ("<meta charset='foo-bogus-9'><p>" + text + "</p>").encode("latin-1")
    assert html_to_text(page, name="bad.html").split() == text.split()


def test_a_non_western_single_byte_text_keeps_its_own_code_page() -> None:
    assert decode_text((RUSSIAN * 3).encode("cp1251")) == RUSSIAN * 3
    greek = "Ελληνικά κείμενα εδώ, και άλλα πολλά.\n" * 3
    assert decode_text(greek.encode("cp1253")) == greek
