"""Draw public/logo_light.png, public/logo_dark.png and public/favicon.png (output is committed).

The drawings are SVG rendered by Debian's chromium through Playwright, so text is anti-aliased
with the system's sans-serif font; no image library is needed.

    .venv/bin/python scripts/make_assets.py
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

PUBLIC = Path(__file__).resolve().parent.parent / "public"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# Two overlapping speech bubbles: Latin "A" and Cyrillic "Я" (no CJK font is needed to draw it).
ICON = """
  <g>
    <path d="M8 4 h36 a8 8 0 0 1 8 8 v22 a8 8 0 0 1 -8 8 h-22 l-10 9 v-9 h-4
             a8 8 0 0 1 -8 -8 v-22 a8 8 0 0 1 8 -8 z"
          fill="#4f46e5"/>
    <text x="22" y="33" font-family="DejaVu Sans, sans-serif" font-weight="700" font-size="26"
          fill="#fff" text-anchor="middle">A</text>
    <path d="M44 28 h36 a8 8 0 0 1 8 8 v22 a8 8 0 0 1 -8 8 h-4 v9 l-10 -9 h-22
             a8 8 0 0 1 -8 -8 v-22 a8 8 0 0 1 8 -8 z"
          fill="#0d9488" stroke="{edge}" stroke-width="3"/>
    <text x="64" y="57" font-family="DejaVu Sans, sans-serif" font-weight="700" font-size="26"
          fill="#fff" text-anchor="middle">Я</text>
  </g>
"""


def logo_svg(text_color: str, edge: str) -> str:
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="400" height="96" viewBox="0 0 400 96">
  <g transform="translate(4,4)">{ICON.format(edge=edge)}</g>
  <text x="104" y="64" font-family="DejaVu Sans, sans-serif" font-weight="700" font-size="44"
        fill="{text_color}" letter-spacing="-1">hymt-chat</text>
</svg>"""


def favicon_svg() -> str:
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 92 92">
  <g transform="translate(1,6)">{ICON.format(edge="#ffffff")}</g>
</svg>"""


def render(page, svg: str, path: Path, width: int, height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.set_content(
        f"<html><body style='margin:0;background:transparent'>{svg}</body></html>"
    )
    page.locator("svg").screenshot(path=str(path), omit_background=True)
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def main() -> None:
    PUBLIC.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(device_scale_factor=1)
        render(page, logo_svg("#1e1b4b", "#ffffff"), PUBLIC / "logo_light.png", 400, 96)
        render(page, logo_svg("#f4f4f5", "#18181b"), PUBLIC / "logo_dark.png", 400, 96)
        render(page, favicon_svg(), PUBLIC / "favicon.png", 64, 64)
        browser.close()


if __name__ == "__main__":
    main()
