"""The ONE place untrusted strings (result JSONs, cards, manifests) become file names, HTML or Markdown.

- :func:`safe_file_name` turns any string into one path component: a whitelist of
  characters, never a separator, a control character, ``.``/``..`` or a hidden name.
- :func:`escape_html` is the one escaper every HTML template uses (text and attributes).
- :func:`escape_md` escapes text for Markdown (emphasis, links, raw HTML, table pipes),
  :func:`md_code` and :func:`md_link` build code spans and links from untrusted values,
  and :func:`md_cell` keeps a table cell on its row (pipes, line breaks).
"""

from __future__ import annotations

import hashlib
import html
import re

#: Characters a file name may keep; every other run of characters becomes one ``_``.
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_.@=+-]+")
#: Markdown's inline syntax (CommonMark lets a backslash escape any ASCII punctuation).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&#$])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
#: Longest name returned (leaves room for suffixes such as ``.predictions.parquet`` under NAME_MAX 255).
MAX_NAME = 200


def safe_file_name(text: object, max_len: int = MAX_NAME) -> str:
    r"""Return ``text`` as a single, harmless path component.

    Characters outside ``A-Z a-z 0-9 _ . @ = + -`` become ``_`` (so ``/``, ``\``,
    control characters and spaces never survive), a leading dot becomes ``_`` (no
    ``.``, ``..`` or hidden files, which the temp-file cleanup owns), and a name
    longer than ``max_len`` is cut and given a digest of the whole text so that
    two long names stay apart. A safe name comes back unchanged.

    >>> safe_file_name("cbd v1.0.0"), safe_file_name("../../PWNED"), safe_file_name("..")
    ('cbd_v1.0.0', '___.._PWNED', '__')
    >>> safe_file_name('"><img src=x onerror=alert(1)>'), safe_file_name("a\nb"), safe_file_name("")
    ('_img_src=x_onerror=alert_1_', 'a_b', '_')
    >>> len(safe_file_name("x" * 500)), safe_file_name("x" * 500) != safe_file_name("x" * 499 + "y")
    (200, True)
    """
    raw = str(text)
    name = _UNSAFE_RUN.sub("_", raw)
    name = re.sub(r"^\.+", lambda m: "_" * len(m.group()), name) or "_"
    if len(name) > max_len:
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = f"{name[: max_len - 13]}-{digest}"
    return name


def escape_html(text: object) -> str:
    """Escape any value for HTML text and quoted attributes (``& < > " '``).

    >>> escape_html('"><img src=x onerror=alert(1)>')
    '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'
    >>> escape_html(None)
    ''
    """
    return "" if text is None else html.escape(str(text), quote=True)


def md_cell(text: object) -> str:
    r"""Keep a value inside one Markdown table cell: line breaks become spaces, pipes are escaped.

    >>> print(md_cell("csls|k:10\nx"))
    csls\|k:10 x
    """
    flat = _CONTROL.sub(" ", "" if text is None else str(text))
    # a pipe after an even run of backslashes (none, or escaped backslashes) still splits the row
    return re.sub(r"(?<!\\)((?:\\\\)*)\|", r"\1\\|", flat)


def escape_md(text: object) -> str:
    r"""Escape a value for Markdown text: no emphasis, link, raw HTML, table pipe or line break survives.

    >>> print(escape_md('<img src=x onerror=alert(1)> [a](b) *c* x|y'))
    \<img src=x onerror=alert(1)\> \[a\](b) \*c\* x\|y
    """
    flat = _CONTROL.sub(" ", "" if text is None else str(text))
    return _MD_SPECIAL.sub(r"\\\1", flat)


def md_code(text: object) -> str:
    """Put a value in a Markdown code span whose fence no backtick inside can close.

    >>> md_code("a`b"), md_code("<b>")
    ('``a`b``', '`<b>`')
    """
    flat = _CONTROL.sub(" ", "" if text is None else str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def md_link(text: object, href: str) -> str:
    """A Markdown link with escaped text and a percent-encoded target (spaces, brackets, quotes).

    >>> md_link("0.5", "results/a b@1.json")
    '[0.5](results/a%20b@1.json)'
    """
    from urllib.parse import quote

    return f"[{escape_md(text)}]({quote(str(href), safe='/@=+-_.~:#')})"


__all__ = [
    "MAX_NAME",
    "escape_html",
    "escape_md",
    "md_cell",
    "md_code",
    "md_link",
    "safe_file_name",
]
