"""HTML and XML: text between tags is translated, tags and attributes come back as they were."""

import asyncio

import pytest

from hymt_chat.api.markup import MarkupError, text_content, translate_markup


async def upper(text: str) -> str:
    return f"«{text.upper()}»"


def run(markup: str, kind: str = "html", **kw: object) -> str:
    return asyncio.run(translate_markup(markup, kind, upper, **kw))  # type: ignore[arg-type]


def test_html_text_nodes_are_translated_tags_and_attributes_kept() -> None:
    html = ('<p class="x" title="Hi">Hello <b>world</b>, <a href="/a?b=1&amp;c=2">friend</a>'
            '</p> tail &amp; more')
    assert run(html) == ('<p class="x" title="Hi">«HELLO» <b>«WORLD»</b>«,» '
                         '<a href="/a?b=1&amp;c=2">«FRIEND»</a></p> «TAIL &amp; MORE»')


def test_whitespace_around_each_piece_is_kept() -> None:
    assert run("  <i> a </i>\n b ") == "  <i> «A» </i>\n «B» "


@pytest.mark.parametrize("html", [
    '<span translate="no">Keep me</span>', '<span class="x notranslate">Keep me</span>',
    "<code>Keep me</code>", "<script>var a = 'Keep me';</script>", "<!-- Keep me -->",
    '<pre>Keep <b>me</b></pre>'])
def test_untranslatable_parts_are_copied(html: str) -> None:
    assert run(f"<div>{html}</div>") == f"<div>{html}</div>"


def test_ignore_tags_name_more_elements_to_keep() -> None:
    assert run("<x>keep</x> go", ignore_tags=["X "]) == "<x>keep</x> «GO»"


def test_whole_html_document_keeps_head_and_doctype() -> None:
    out = run("<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head>"
              "<body><p>hi</p></body></html>")
    assert out.startswith("<!DOCTYPE html>") and "<style>p{}</style>" in out
    assert "<p>«HI»</p>" in out and "<title>«T»</title>" in out


def test_xml_keeps_declaration_namespaces_and_empty_elements() -> None:
    xml = '<?xml version="1.0"?><d xmlns:t="urn:x"><t:s id="1">hi <br/>there</t:s></d>'
    assert run(xml, "xml") == ('<?xml version="1.0"?><d xmlns:t="urn:x"><t:s id="1">«HI» <br/>'
                               "«THERE»</t:s></d>")


@pytest.mark.parametrize("xml", ["<a><b>unclosed</a>",
                                 '<!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]><d>&e;</d>'])
def test_bad_or_dangerous_xml_is_refused(xml: str) -> None:
    with pytest.raises(MarkupError, match="not well-formed XML"):
        run(xml, "xml")


def test_text_content_is_what_detection_reads() -> None:
    assert text_content("<p>Bonjour <code>x=1</code> le <b>monde</b></p>", "html") == \
        "Bonjour\nle\nmonde"
