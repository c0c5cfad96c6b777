"""content/markdown.js on small synthetic DOMs, one rule each, in Chromium (no extension).

Each case is the markup a site uses for one structure (named in the case id) and the exact
Markdown the capture must hold for it; the text of the same walk is checked not to change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.extension.test_extractor import chromium as chromium  # noqa: F401  (the fixture, re-exported)
from tests.extension.test_extractor import inject, new_page

pytestmark = pytest.mark.asyncio(loop_scope="module")

CASES: list[tuple[str, str, str, str]] = [
    (
        "codemirror-lines-gutter-header",
        "<div class='hdr'><span>python</span><button>Copy</button></div>"
        "<div class='cm-editor'><div class='cm-gutters'><div>1</div><div>2</div><div>3</div></div>"
        "<div class='cm-content'><div class='cm-line'>def f():</div><div class='cm-line'>    return 1</div>"
        "<div class='cm-line'><br></div><div class='cm-line'>print(f())</div></div></div>",
        "user",
        "```python\ndef f():\n    return 1\n\nprint(f())\n```",
    ),
    (
        "pre-code-language-class-br-spans",
        "<pre><code class='language-JavaScript'>"
        "<span>if (a) {</span><br><span>  b();</span><br><span>}</span></code></pre>",
        "assistant",
        "```javascript\nif (a) {\n  b();\n}\n```",
    ),
    (
        "monaco-nbsp-view-lines",
        "<pre><div class='view-lines'><div class='view-line'><span>x\u00a0=\u00a0[1,\u00a0\u00a02]</span></div>"
        "<div class='view-line'><span>\u00a0\u00a0y</span></div></div></pre>",
        "assistant",
        "```\nx = [1,  2]\n  y\n```",
    ),
    (
        "backticks-in-code-get-a-longer-fence",
        "<pre><code>a = ```x```</code></pre>",
        "assistant",
        "````\na = ```x```\n````",
    ),
    (
        "katex-inline-and-display-and-data-math",
        "<p>Euler <span class='katex'><span class='katex-mathml'><math><semantics><mrow></mrow>"
        "<annotation encoding='application/x-tex'>e^{i\\pi}+1=0</annotation></semantics></math></span>"
        "<span class='katex-html' aria-hidden='true'>eiπ+1=0</span></span> holds.</p>"
        "<div class='math-block' data-math='\\int_0^1 x\\,dx'><span class='katex-display'>∫x dx</span></div>",
        "assistant",
        "Euler $e^{i\\pi}+1=0$ holds.\n\n$$\n\\int_0^1 x\\,dx\n$$",
    ),
    (
        "table-with-list-and-code-in-cells-stays-gfm",
        "<table><thead><tr><th>k</th><th>v</th></tr></thead><tbody><tr><td><code>a|b</code></td>"
        "<td><ul><li>one</li><li>two</li></ul></td></tr></tbody></table>",
        "assistant",
        "| k   | v   |\n| --- | --- |\n| `a\\|b` | one two |",
    ),
    (
        "aria-grid-without-rows",
        "<div role='table' style='display:grid;grid-template-columns:repeat(2,1fr)'>"
        "<div role='columnheader'>A</div><div role='columnheader'>B</div>"
        "<div role='cell'>1</div><div role='cell'>2</div><div role='cell'>3</div><div role='cell'>4</div></div>",
        "assistant",
        "| A   | B   |\n| --- | --- |\n| 1   | 2   |\n| 3   | 4   |",
    ),
    (
        "nested-list-heading-quote-emphasis",
        "<h3>Plan</h3><ol><li>first<ul><li>inner <em>x</em></li></ul></li><li><strong>second</strong></li></ol>"
        "<blockquote><p>quoted</p></blockquote>",
        "assistant",
        "### Plan\n\n1.  first\n    -   inner *x*\n2.  **second**\n\n> quoted",
    ),
    (
        "links-images-and-hostile-hrefs",
        "<p><a href='https://a.example/x?utm_source=chat'>site</a> <a href='javascript:alert(1)'>bad</a> "
        "<img src='https://a.example/i.png' alt='pic'><img src='data:image/png;base64,AAAA' alt='inline'></p>",
        "assistant",
        "[site](https://a.example/x?utm_source=chat) bad [pic](https://a.example/i.png)",
    ),
    (
        "typed-prompt-keeps-its-lines",
        "<div style='white-space:pre-wrap'>line one\n    indented two\n\nafter a blank</div>",
        "user",
        "line one\n    indented two\n\nafter a blank",
    ),
]


@pytest.mark.parametrize(("html", "role", "want"), [pytest.param(h, r, w, id=i) for i, h, r, w in CASES])
async def test_markdown_rule(chromium: Any, html: str, role: str, want: str) -> None:  # noqa: F811
    page = await new_page(
        chromium,
        html="<!DOCTYPE html><html><body><div id='turn'>" + html + "</div></body></html>",
        url="https://example.org/",
    )
    try:
        await inject(page, skip=("content/capture.js",))
        got = await page.evaluate(
            """(role) => {
            const ns = window.Wherefrom, root = document.getElementById('turn');
            const exclude = 'button, .hdr';  // a site's registry excludes its code header
            const sink = ns.markdown.sink({root, exclude, role});
            const text = ns.extractor.visibleText(root, exclude, sink);
            return {text, markdown: ns.markdown.join([sink]), plain: ns.extractor.visibleText(root, exclude)};
        }""",
            role,
        )
        assert got["markdown"] == want
        assert got["text"] == got["plain"], "the sink changes nothing in the text"
    finally:
        await page.context.close()
