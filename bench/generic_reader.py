"""The generic conversation reader on the saved real pages, as they are and with names renamed.

    .venv/bin/python bench/generic_reader.py [--page NAME] [--json bench/out/generic_reader.json]

In headless Chromium (no extension: the content scripts injected in files.json order, as
tests/extension/test_extractor.py does), each page of ../shared/reference/real-dom/ is read three ways:
  - `registry`: the runtime's own choice (registry layouts first, then the generic reader);
  - `generic`: the maintainers' switch (captureMode "generic": the generic reader only);
  - `renamed`: the generic reader after every class name, id and data-testid was renamed
    consistently (testkit/farm/rename.py, as a redeploy renames CSS-module hashes).
The page's own data (registry `page_data`, share pages) stays a second source in every mode.
Per page and mode: turns expected / captured / exact (testkit/farm/real_pages.compare), the
reader, and the covered share of the conversation region's visible text; then the share of
pages complete per mode.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testkit.extractor_kit import CHROME_STUB, CHROMIUM, FILES, REAL_DOM, file_text, load_real_dom  # noqa: E402
from testkit.farm import real_pages  # noqa: E402
from testkit.farm.rename import RENAME_JS  # noqa: E402

READ = """([generic]) => {
  const ns = window.Wherefrom, X = ns.extractor;
  const site = X.siteFor(location.href);
  if (!site) return {reader: null, turns: [], share: null};
  let found = X.detect(document, site, {generic});
  const data = site.page_data ? ns.pageData.read(document, site) : null;
  if (data && ns.detect.preferPageData(found, data.turns)) {
    found = {layout: {id: 'page-data:' + data.reader.id}, turns: data.turns, tried: [], empty: [], source: 'page-data'};
  }
  const cov = ns.coverage.covered(document, site, found, found.turns);
  const miss = ns.coverage.settledMiss(document, site, found, found.turns, {generic});
  return {reader: found.layout && found.layout.id, turns: found.turns.map(t => [t.role, t.text]),
          share: cov && cov.share, kind: miss && miss.kind};
}"""


async def read_page(browser: Any, name: str, mode: str) -> dict[str, Any]:
    expected, html, _ = load_real_dom(REAL_DOM / f"{name}.expected.json")
    url = expected["url"]
    ctx = await browser.new_context(viewport={"width": 1200, "height": 800})

    async def serve(route: Any) -> None:
        if route.request.url.split("#")[0] == url:
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
        else:
            await real_pages.answer_subresource(route)

    await ctx.route("**/*", serve)
    await ctx.add_init_script(CHROME_STUB)
    page = await ctx.new_page()
    try:
        await page.goto(url, wait_until="load")
        if mode == "renamed":
            await page.evaluate(RENAME_JS)
        for rel in FILES:
            text = file_text(rel)
            if text is not None and rel != "content/capture.js":
                await page.add_script_tag(content=text)
        got = await page.evaluate(READ, [mode != "registry"])
    finally:
        await ctx.close()
    cmp = real_pages.compare(name, expected["turns"], [(r, t) for r, t in got["turns"]])
    return {
        "page": name,
        "mode": mode,
        "expected": cmp.expected,
        "captured": cmp.captured,
        "matched": cmp.matched,
        "exact": cmp.exact,
        "reader": got["reader"],
        "share": got["share"],
        "miss": got["kind"],
        "first_diff": cmp.first_diff,
    }


def write(out: Path, data: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--page")
    ap.add_argument("--modes", default="registry,generic,renamed")
    ap.add_argument("--json", default=str(ROOT / "bench" / "out" / "generic_reader.json"))
    args = ap.parse_args()
    from playwright.async_api import async_playwright

    names = sorted(p.name[: -len(".expected.json")] for p in REAL_DOM.glob("*.expected.json"))
    if args.page:
        names = [n for n in names if args.page in n]
    modes = args.modes.split(",")
    rows = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for name in names:
            for mode in modes:
                r = await read_page(browser, name, mode)
                rows.append(r)
                share = "-" if r["share"] is None else f"{r['share']:.2f}"
                print(
                    f"{name:34} {mode:8} {r['matched']}/{r['expected']} cap {r['captured']} "
                    f"{'EXACT' if r['exact'] else 'wrong'} reader={r['reader']} cover={share} miss={r['miss']}"
                    + ("" if r["exact"] else f"  {r['first_diff'][:150]}")
                )
        await browser.close()
    summary = {}
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        summary[mode] = {
            "pages": len(mine),
            "exact": sum(r["exact"] for r in mine),
            # wrong, and the runtime records nothing at all
            "silent_partial": sum(1 for r in mine if not r["exact"] and not r["miss"]),
            # wrong, and the only record is the generic_reader note (no miss names what is wrong)
            "noted_only": sum(1 for r in mine if not r["exact"] and r["miss"] == "generic_reader"),
        }
        s = summary[mode]
        print(
            f"{mode}: {s['exact']}/{len(mine)} exact; silent partials {s['silent_partial']}; "
            f"wrong with only the generic_reader note {s['noted_only']}"
        )
    write(Path(args.json), {"summary": summary, "pages": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
