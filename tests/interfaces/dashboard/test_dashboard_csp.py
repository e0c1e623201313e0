"""The dashboard's Content-Security-Policy (defence in depth behind the templates' escaping): every
page sends it, and every page still works under it in a real Chromium, with no violation reported:
the charts draw, the forms post (the new-block form too, which a script used to address)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import tab_for  # noqa: E402

WATCH = ("window.__violations = [];"
         "document.addEventListener('securitypolicyviolation',"
         " (e) => window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));")


def _policy(response) -> dict[str, str]:
    header = response.headers.get("content-security-policy", "")
    return {part.split()[0]: part.strip() for part in header.split(";") if part.strip()}


def _watched(browser, site):
    tab = tab_for(browser, site, site.key_a)
    reported: list[str] = []
    tab.on("console", lambda message: reported.append(message.text) if "Content Security Policy" in message.text
           else None)
    tab.context.add_init_script(WATCH)
    return tab, reported


def test_every_page_sends_a_strict_policy_and_works_under_it(browser, site):
    tab, reported = _watched(browser, site)
    pages = ["/", "/agents/alice", "/agents/alice/search?q=heron", f"/agents/alice/memories/{site.memories[0]}",
             f"/agents/alice/memories/{site.lisbon}", "/agents/alice/stats", "/agents/alice/blocks",
             "/agents/alice/forget?q=heron", "/agents/alice/short-term", "/agents/bob"]
    for path in pages:
        response = tab.goto(f"{site.url}{path}")
        policy = _policy(response)
        assert policy.get("default-src") == "default-src 'none'", path
        assert policy.get("script-src") == "script-src 'self'" and policy.get("style-src") == "style-src 'self'", path
        assert policy.get("frame-ancestors") == "frame-ancestors 'none'" and "form-action" in policy, path
        if path.endswith("/stats") or "/memories/" in path and site.memories[0] in path:
            tab.wait_for_function("() => window.Chart && Chart.getChart(document.querySelector('canvas').id)")
        assert tab.evaluate("() => window.__violations") == [], path
        assert tab.evaluate("() => getComputedStyle(document.querySelector('header')).display") == "flex", path
    assert reported == []


def test_the_login_and_error_pages_send_it_too(browser, site):
    context = browser.new_context()
    tab = context.new_page()
    assert "script-src 'self'" in _policy(tab.goto(f"{site.url}/login")).get("script-src", "")
    refused = tab.request.post(f"{site.url}/login", form={"key": "not a key"}, max_redirects=0)
    assert "default-src 'none'" in refused.headers.get("content-security-policy", "")
    context.close()


def test_a_new_block_is_created_through_its_form_under_the_policy(browser, site):
    tab, reported = _watched(browser, site)
    tab.goto(f"{site.url}/agents/alice/blocks")
    tab.fill("#new-block input[name=key]", "human")
    tab.fill("#new-block textarea", "Lives in Lisbon")
    tab.click("#new-block button")
    tab.wait_for_selector("#block-human")
    assert tab.evaluate("() => window.__violations") == [] and reported == []
    with site.memory() as mem:
        assert mem.recall_memory_block("human") == "Lives in Lisbon"
    tab.fill("#new-block input[name=key]", "bad key!")
    tab.evaluate("() => document.querySelector('#new-block input[name=key]').removeAttribute('pattern')")
    tab.click("#new-block button")
    assert "invalid block key" in tab.inner_text("#error")
