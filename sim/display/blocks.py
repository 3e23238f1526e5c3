"""Documents as a list of blocks, rendered to HTML and to Markdown by one renderer each.

Why blocks: ``sniff report`` writes the same content as a self-contained HTML page and as
Markdown, and other features (``sniff openings``) add sections to it; building a list of
headings, paragraphs, tables and charts once and rendering it twice keeps every copy saying
the same thing in the same style. Charts are PNG bytes: the HTML inlines them as base64
``data:`` URIs, the Markdown links the file of that name.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass

from sim.display.formatting import printable

__all__ = ["Chart", "Heading", "html_body", "Paragraph", "Table", "to_html", "to_markdown"]

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #f2f2f2; } td.text, th.text { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: .4em .8em; }
.meta { color: #555; font-size: .9em; }
"""


@dataclass
class Heading:
    """A heading block of a document, at a level (2: a section).

    Attributes:
        text: the heading's text.
        level: its level: 2 a section, 3 a subsection.
    """

    text: str
    level: int = 2


@dataclass
class Paragraph:
    """A paragraph block; a note is set apart (a quote in Markdown).

    Attributes:
        text: may hold **bold**.
        note: a note: set apart (a quote in Markdown).
    """

    text: str  # may hold **bold**
    note: bool = False


@dataclass
class Table:
    """A table block: column names and rows of text, its first columns aligned left.

    Attributes:
        columns: the column names.
        rows: the rows, one text per column.
        text_columns: leading columns aligned left.
    """

    columns: list[str]
    rows: list[list[str]]
    text_columns: int = 1  # leading columns aligned left


@dataclass
class Chart:
    """A chart block: a PNG with its caption, written beside the Markdown.

    Attributes:
        file: the PNG's file name beside the Markdown.
        caption: the caption shown under the chart.
        png: the PNG's bytes.
    """

    file: str  # the PNG's file name beside the Markdown
    caption: str
    png: bytes


def _inline_markdown(text: str) -> str:
    """The little Markdown the blocks use (**bold**), as HTML."""
    escaped = html.escape(text)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)


def _html_block(block) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{html.escape(block.text)}</h{block.level}>"
    if isinstance(block, Paragraph):
        css = ' class="note"' if block.note else ""
        return f"<p{css}>{_inline_markdown(block.text)}</p>"
    if isinstance(block, Table):
        head = "".join(f'<th class="text">{html.escape(c)}</th>' if i < block.text_columns
                       else f"<th>{html.escape(c)}</th>" for i, c in enumerate(block.columns))
        rows = []
        for row in block.rows:
            cells = "".join(f'<td class="text">{html.escape(str(c))}</td>'
                            if i < block.text_columns else f"<td>{html.escape(str(c))}</td>"
                            for i, c in enumerate(row))
            rows.append(f"<tr>{cells}</tr>")
        return (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
                "</tbody></table>")
    if isinstance(block, Chart):
        data = base64.b64encode(block.png).decode("ascii")
        return (f'<figure><img src="data:image/png;base64,{data}" '
                f'alt="{html.escape(block.caption)}"><figcaption>'
                f"{html.escape(block.caption)} ({html.escape(block.file)})"
                "</figcaption></figure>")
    raise TypeError(f"not a block: {type(block).__name__}")


def html_body(items: list) -> str:
    """The blocks as HTML elements, one per line (for a page, or a section of one)."""
    return "\n".join(_html_block(block) for block in items)


def to_html(items: list) -> str:
    """A whole self-contained page; its title is the first level-1 heading."""
    title = next((b.text for b in items if isinstance(b, Heading) and b.level == 1), "report")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + html_body(items) + "\n</body></html>\n")


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def _md_text(text: str, one_line: bool = False) -> str:
    """Text for Markdown, where raw HTML is live: ``<`` that could open a tag is written
    ``&lt;`` (a label ``<script>`` from a folder is shown, never run); ``p < 0.05`` stays.
    Control characters are escaped (``\\x1b``: ``cat report.md`` must not recolour the
    terminal), newlines too in a heading or a cell (``one_line``)."""
    return _TAG_START.sub("&lt;", printable(str(text), one_line))


def _md_cell(text: str) -> str:
    return _md_text(text, one_line=True).replace("|", "\\|")


def to_markdown(items: list) -> str:
    """A document's blocks as Markdown text."""
    lines: list[str] = []
    for block in items:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + _md_text(block.text, one_line=True), ""]
        elif isinstance(block, Paragraph):
            lines += [("> " if block.note else "") + _md_text(block.text), ""]
        elif isinstance(block, Table):
            lines.append("| " + " | ".join(_md_cell(c) for c in block.columns) + " |")
            lines.append("|" + "|".join(":---" if i < block.text_columns else "---:"
                                        for i in range(len(block.columns))) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, Chart):
            lines += [f"![{_md_text(block.caption, one_line=True)}]({block.file})", ""]
    return "\n".join(lines)
