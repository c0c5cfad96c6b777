"""Library pages keep their structure: the extraction's Markdown (headings, lists, tables,
code) is stored beside the search text, which does not change, and GET /api/library/{id}
answers it; export carries it and import brings it back."""

from __future__ import annotations

from server.library.extract import extract_html
from tests.conftest import Api

URL = "https://orchard.example/grafting"
HTML = (
    "<!doctype html><html lang=en><head><title>Grafting walnut trees</title></head><body>\n"
    '<nav><a href="/">Home</a> <a href="/about">About</a></nav>\n'
    "<main><article><h1>Grafting walnut trees</h1>\n"
    "<p>Grafting joins a scion of a chosen variety to a hardy rootstock. It is the usual way "
    "to grow a named walnut cultivar, because seedlings rarely keep the traits of their parent "
    "tree.</p>\n"
    "<h2>When to graft</h2>\n"
    "<p>Graft in spring, when the rootstock's sap is rising and the buds of the scion are "
    "still dormant. Warm days around 25 degrees help the union heal quickly.</p>\n"
    "<ul><li>Cut scions in winter and keep them cold</li><li>Wait for the rootstock to leaf "
    "out</li><li>Graft on a warm, still morning</li></ul>\n"
    "<h2>Methods compared</h2>\n"
    "<table><thead><tr><th>Method</th><th>Success</th><th>Skill</th></tr></thead>\n"
    "<tbody><tr><td>Bark graft</td><td>High</td><td>Low</td></tr><tr><td>Whip and "
    "tongue</td><td>Medium</td><td>High</td></tr><tr><td>Patch "
    "bud</td><td>High</td><td>Medium</td></tr></tbody></table>\n"
    "<h2>Record keeping</h2>\n"
    "<p>Keep a log of every graft, so you can see which methods work in your <a href='/orchard'>orchard</a> "
    "over the years.</p>\n"
    "<pre><code>date,tree,method,result\n"
    "2024-04-12,A3,bark,took\n"
    "2024-04-12,A4,patch,failed</code></pre>\n"
    "<blockquote>A graft that has not pushed by midsummer has failed.</blockquote>\n"
    "<p>Seal every cut with grafting wax and label the tree.</p>\n"
    "</article></main><footer>Copyright</footer></body></html>"
)


async def test_a_saved_page_answers_its_markdown_beside_unchanged_search_text(api: Api) -> None:
    status, body = await api.post("/api/library/add_text", {"url": URL, "title": "", "html": HTML})
    assert status == 201, body
    assert "markdown" not in body["document"]  # lists and saves answer no full text
    status, got = await api.get(f"/api/library/{body['document']['id']}")
    assert status == 200
    doc = got["document"]
    md = doc["markdown"]
    assert md.startswith("# Grafting walnut trees") and "\n## When to graft\n" in md
    assert "\n- Wait for the rootstock to leaf out\n" in md
    assert "| Method | Success | Skill |" in md and "\n|---|---|---|\n" in md
    assert "```\ndate,tree,method,result\n" in md and md.count("```") == 2
    assert "methods work in your [orchard](https://orchard.example/orchard) over the years." in md
    assert "[Home]" not in md  # the navigation's link is not in any extracted block
    assert "Home" not in md and "Copyright" not in md  # boilerplate stays out, as in the text
    # the search text is exactly what extraction without Markdown gives (the same pass)
    assert doc["text"] == extract_html(HTML, URL, markdown=False).text
    assert "#" not in doc["text"] and "```" not in doc["text"]
    # search finds the page by its words, not by Markdown syntax
    status, found = await api.get("/api/search", params={"q": "rootstock scion"})
    assert any(r["kind"] == "document" for r in found["results"])


async def test_a_page_saved_as_text_has_no_markdown(api: Api) -> None:
    text = "A plain page of text about walnut grafting. " * 10
    status, body = await api.post("/api/library/add_text", {"url": URL, "title": "Plain", "text": text})
    assert status == 201
    status, got = await api.get(f"/api/library/{body['document']['id']}")
    assert got["document"]["markdown"] is None and got["document"]["text"] == text.strip()


async def test_saving_the_same_page_again_fills_in_markdown_kept_before(api: Api) -> None:
    status, first = await api.post("/api/library/add_text", {"url": URL, "title": "", "html": HTML})
    doc_id = first["document"]["id"]
    # a page stored before pages kept their structure: same text, no Markdown
    async with api.store.transaction() as conn:
        await conn.execute("UPDATE documents SET markdown = NULL WHERE id = ?", (doc_id,))
    status, again = await api.post("/api/library/add_text", {"url": URL, "title": "", "html": HTML})
    assert status == 200 and again["outcome"] == "updated"
    _, got = await api.get(f"/api/library/{doc_id}")
    assert got["document"]["markdown"].startswith("# Grafting walnut trees")
    status, same = await api.post("/api/library/add_text", {"url": URL, "title": "", "html": HTML})
    assert same["outcome"] == "unchanged"


async def test_export_carries_the_markdown_and_import_brings_it_back(api: Api) -> None:
    await api.post("/api/library/add_text", {"url": URL, "title": "", "html": HTML})
    _, page = await api.get("/api/export", params={"kind": "documents"})
    item = page["items"][0]
    assert item["markdown"].startswith("# Grafting walnut trees")
    doc_id = (await api.get("/api/library"))[1]["documents"][0]["id"]
    assert (await api.delete(f"/api/library/{doc_id}"))[0] == 200
    status, answer = await api.post("/api/import", {"import_id": "md-back", "source": "wherefrom", "documents": [item]})
    assert status == 200 and answer["documents"]["saved"] == 1, answer
    _, again = await api.get("/api/export", params={"kind": "documents"})
    assert again["items"] == [item]


def test_a_code_blocks_language_is_kept() -> None:
    """A code block marked with its language (`<code class="language-python">`, highlight.js's
    `lang-`, on the code or its pre) keeps it on its fence; one without a language stays plain;
    the search text does not change."""
    html = HTML.replace(
        "<blockquote>",
        '<pre><code class="hljs language-python">def ratio(took, total):\n    return took / total</code></pre>\n'
        "<p>Run it on the log every autumn to see the season's success rate.</p>\n"
        '<pre class="lang-sh"><code>wc -l grafts.csv\nsort grafts.csv</code></pre>\n'
        "<blockquote>",
    )
    got = extract_html(html, URL)
    assert got.markdown is not None
    assert "```python\ndef ratio(took, total):\n    return took / total\n```" in got.markdown, got.markdown
    assert "```sh\nwc -l grafts.csv\nsort grafts.csv\n```" in got.markdown, got.markdown
    assert "```\ndate,tree,method,result\n" in got.markdown  # no language given: a plain fence
    assert got.text == extract_html(html, URL, markdown=False).text
