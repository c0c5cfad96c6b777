"""Links put back into a page's Markdown from the page (server.library.links): only where the
anchor's block is on one Markdown line and its words occur there once, as whole words; only
http(s), made absolute; never in code, never from navigation outside any block."""

from __future__ import annotations

from lxml.html import fromstring

from server.library.links import add_links, page_anchors

PAGE = "https://orchard.example/guides/grafting"


def linked(html: str, markdown: str) -> str:
    return add_links(markdown, page_anchors(fromstring(html), PAGE), PAGE)


def test_an_anchor_in_its_paragraph_becomes_an_absolute_link() -> None:
    html = "<body><p>Read the <a href='../bark'>bark graft guide</a> first.</p></body>"
    assert linked(html, "Read the bark graft guide first.") == (
        "Read the [bark graft guide](https://orchard.example/bark) first."
    )


def test_navigation_script_links_and_words_inside_words_stay_text() -> None:
    html = (
        "<body><nav><a href='/'>Home</a></nav>"
        "<p>Go Home after the <a href='javascript:alert(1)'>evil one</a> and "
        "<a href='/info'>Info</a>rmation.</p></body>"
    )
    md = "Go Home after the evil one and Information."
    assert linked(html, md) == md


def test_a_word_twice_on_its_line_or_a_block_on_two_lines_stays_text() -> None:
    html = "<body><p><a href='/a'>walnut</a> and walnut again</p><p>Same <a href='/b'>words</a></p></body>"
    md = "walnut and walnut again\n\nSame words\n\nSame words"
    assert linked(html, md) == md


def test_code_is_never_linked_and_a_url_with_spaces_is_bracketed() -> None:
    html = "<body><p>See <a href='/a b'>the table</a>.</p><pre>the table</pre></body>"
    md = "See the table.\n\n```\nthe table\n```"
    assert linked(html, md) == "See [the table](<https://orchard.example/a b>).\n\n```\nthe table\n```"


def test_list_items_and_table_cells_get_their_links() -> None:
    html = (
        "<body><ul><li><a href='/whip'>Whip and tongue</a></li></ul>"
        "<table><tr><td><a href='https://x.example/bud'>Patch bud</a></td><td>High</td></tr></table></body>"
    )
    md = "- Whip and tongue\n\n| Patch bud | High |\n|---|---|"
    assert linked(html, md) == (
        "- [Whip and tongue](https://orchard.example/whip)\n\n| [Patch bud](https://x.example/bud) | High |\n|---|---|"
    )
