"""The encoding labels a document may declare, as the WHATWG Encoding Standard
lists them (https://encoding.spec.whatwg.org/#names-and-labels, its
``encodings.json``), each with the Python codec that reads it.

A label outside this table names no encoding, whatever Python's codec
registry answers to it: browsers ignore such a ``<meta charset>``, and so does
``agentflow.documents.encoding`` (the next rows of its table decide). Python
knows many codecs no browser decodes a page with, some of which hide markup
in plain ASCII: UTF-7 (``+ADw-script+AD4-`` is ``<script>``; the Standard
dropped it for that reason), ``unicode_escape`` (``\\x3c``), EBCDIC code pages.
The Standard's *replacement* encoding (ISO-2022-KR, ISO-2022-CN, HZ: the same
risk) decodes a whole page as one U+FFFD; a page declaring it is read as if
it declared nothing, never in the declared encoding.

The meanings differ from Python's codecs of the same name where the Standard
says so: ``iso-8859-1``, ``latin1`` and ``ascii`` mean windows-1252,
``gb2312`` means GBK, ``shift_jis`` means windows-31J, ``euc-kr`` means
windows-949, ``tis-620`` means windows-874; UTF-16 declared in a ``<meta>`` is
read as UTF-8 and ``x-user-defined`` as windows-1252 (the HTML Standard's
prescan: a ``<meta>`` that could be read was not UTF-16).
"""

from __future__ import annotations

import codecs

__all__ = ["LABELS", "REPLACEMENT_LABELS"]

_ENCODINGS: tuple[tuple[str, str], ...] = (  # (Python codec, the labels it reads)
    ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    ("cp866", "866 cp866 csibm866 ibm866"),
    ("iso8859-2", "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
                  "iso_8859-2:1987 l2 latin2"),
    ("iso8859-3", "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
                  "iso_8859-3:1988 l3 latin3"),
    ("iso8859-4", "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
                  "iso_8859-4:1988 l4 latin4"),
    ("iso8859-5", "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
                  "iso_8859-5 iso_8859-5:1988"),
    ("iso8859-6", "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
                  "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 "
                  "iso_8859-6 iso_8859-6:1987"),
    ("iso8859-7", "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
                  "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    ("iso8859-8", "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
                  "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual "
                  "csiso88598i iso-8859-8-i logical"),  # ISO-8859-8-I: the same bytes
    ("iso8859-10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    ("iso8859-13", "iso-8859-13 iso8859-13 iso885913"),
    ("iso8859-14", "iso-8859-14 iso8859-14 iso885914"),
    ("iso8859-15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    ("iso8859-16", "iso-8859-16"),
    ("koi8-r", "cskoi8r koi koi8 koi8-r koi8_r"),
    ("koi8-u", "koi8-ru koi8-u"),
    ("mac-roman", "csmacintosh mac macintosh x-mac-roman"),
    ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    ("cp1250", "cp1250 windows-1250 x-cp1250"),
    ("cp1251", "cp1251 windows-1251 x-cp1251"),
    ("cp1252", "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
               "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii "
               "windows-1252 x-cp1252"),
    ("cp1253", "cp1253 windows-1253 x-cp1253"),
    ("cp1254", "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
               "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"),
    ("cp1255", "cp1255 windows-1255 x-cp1255"),
    ("cp1256", "cp1256 windows-1256 x-cp1256"),
    ("cp1257", "cp1257 windows-1257 x-cp1257"),
    ("cp1258", "cp1258 windows-1258 x-cp1258"),
    ("mac-cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    ("gbk", "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"),
    ("gb18030", "gb18030"),
    ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    ("iso2022_jp", "csiso2022jp iso-2022-jp"),
    ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    ("cp949", "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
              "ksc5601 ksc_5601 windows-949"),
    # the HTML prescan's rules: UTF-16 in a <meta> is UTF-8, x-user-defined windows-1252
    ("utf-8", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff unicodefffe utf-16 "
              "utf-16be utf-16le"),
    ("cp1252", "x-user-defined"),
)

LABELS: dict[str, str] = {label: codecs.lookup(codec).name
                          for codec, labels in _ENCODINGS for label in labels.split()}
"""Each WHATWG label (lower case) -> the name of the Python codec that reads it."""

REPLACEMENT_LABELS = frozenset(
    {"csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "iso-2022-kr", "replacement"})
"""The labels of the Standard's *replacement* encoding: followed by no reader."""
