"""The few moves every page test makes (open the chat, type a message, count the answers) in
the real browser of the ``browser`` fixture (tests/conftest.py: Debian's chromium, Playwright)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, expect

__all__ = ["ANSWER", "CHROMIUM", "CHROMIUM_ARGS", "answers", "choose", "covered_controls",
           "new_page", "open_chat", "open_list", "open_profile", "send"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ANSWER = ".ai-message code.whitespace-pre-wrap"  # the translation block (verbatim text)
# What a person clicks, taps or types in.
_CONTROLS = ("button, a[href], input:not([type=hidden]), select, textarea, [role=button], "
             "[role=combobox], [role=option], [role=menuitem], [contenteditable=true]")


def new_page(owner: Browser | BrowserContext, **options: Any) -> Page:
    """A page whose every wait is generous and bounded: Playwright's 30 s default is a verdict
    on the host's speed when two servers and a model share two cores."""
    page = owner.new_page(**options)
    page.set_default_timeout(120_000)
    return page


def open_list(page: Page, field: str) -> None:
    """Open the settings' select *field* (Chainlit's, a Radix Select) from the keyboard. Opened
    by a pointer press, it ignores the next pointer release within 10 px of that press (Radix's
    SelectContent). On a slow host the press's own release can come before the list is drawn,
    and the next release is the click on an option, which may lie right there once scrolled
    into view: that click is swallowed and the list stays open over the page."""
    page.focus(f"#{field}")
    page.keyboard.press("Enter")
    expect(page.get_by_role("listbox")).to_be_visible()


def choose(page: Page, field: str, option: str) -> None:
    """*option* of the settings' select *field*; the list closed again."""
    open_list(page, field)
    page.get_by_role("option", name=option).click()
    expect(page.get_by_role("listbox")).to_have_count(0)


def open_chat(browser: Browser, url: str, dialogs: list[str] | None = None) -> Page:
    """A page on the app, ready to type in; alert()/confirm() calls are recorded and dismissed."""
    page = new_page(browser, viewport={"width": 1100, "height": 900}, accept_downloads=True)

    def on_dialog(dialog) -> None:
        if dialogs is not None:
            dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(url)
    # Starters are enabled once the socket is connected and the session started.
    page.wait_for_selector("#starters button:not([disabled])", timeout=60_000)
    return page


def open_profile(browser: Browser, url: str, profile: str, ready: str,
                 init_script: str | None = None) -> Page:
    """A page on the app switched to *profile* (Chainlit's profile picker), once *ready* shows;
    its waits are the page's own (:func:`new_page`)."""
    page = new_page(browser, viewport={"width": 1100, "height": 900}, accept_downloads=True)
    if init_script:
        page.add_init_script(init_script)
    page.goto(url)
    page.wait_for_selector("#starters button:not([disabled])")  # the Translator, started
    page.click("#chat-profiles")
    page.click(f"[data-test='select-item:{profile}']")
    expect(page.get_by_text(ready).first).to_be_visible()
    return page


def send(page: Page, text: str) -> None:
    """Type *text* and press Enter once the composer takes it: Chainlit ignores Enter while its
    chat is ``disabled`` (a task of the tab still running, the chat's start among them), and
    shows that as a disabled send button (or its Stop button)."""
    page.click("#chat-input")
    page.keyboard.type(text)
    page.wait_for_selector("#chat-submit:not([disabled])")
    page.keyboard.press("Enter")


def answers(page: Page) -> int:
    return page.locator(ANSWER).count()




def covered_controls(page: Page, over: str = "#hymt-banner") -> list[str]:
    """The visible controls whose box the element *over* intersects (none: it covers nothing);
    its own controls (the banner's close button) excepted."""
    return page.evaluate("""([over, controls]) => {
        const top = document.querySelector(over);
        if (!top || !top.getClientRects().length) return [];
        const a = top.getBoundingClientRect();
        const hit = [];
        for (const el of document.querySelectorAll(controls)) {
            if (top.contains(el) || !el.getClientRects().length) continue;
            const style = getComputedStyle(el);
            if (style.visibility === "hidden" || style.display === "none") continue;
            const b = el.getBoundingClientRect();
            if (b.width === 0 || b.height === 0) continue;
            if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
                hit.push(`${el.tagName.toLowerCase()}#${el.id} "${(el.innerText || el.value ||
                    el.getAttribute("aria-label") || "").trim().slice(0, 40)}"`);
            }
        }
        return hit;
    }""", [over, _CONTROLS])
