"""The few moves every page test makes (open the chat, type a message, count the answers) in
the real browser of the ``browser`` fixture (tests/conftest.py: Debian's chromium, Playwright)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page

__all__ = ["ANSWER", "CHROMIUM", "CHROMIUM_ARGS", "answers", "new_page", "open_chat", "send"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ANSWER = ".ai-message code.whitespace-pre-wrap"  # the translation block (verbatim text)


def new_page(owner: Browser | BrowserContext, **options: Any) -> Page:
    """A page whose every wait is generous and bounded: Playwright's 30 s default is a verdict
    on the host's speed when two servers and a model share two cores."""
    page = owner.new_page(**options)
    page.set_default_timeout(120_000)
    return page


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


def send(page: Page, text: str) -> None:
    page.click("#chat-input")
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def answers(page: Page) -> int:
    return page.locator(ANSWER).count()


