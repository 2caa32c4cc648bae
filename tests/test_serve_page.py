"""The page of `structperc serve` (``GET /``) in Debian's headless Chromium, against a real server process:
type a text, pick a model, submit, and find the entities highlighted as the API tags them, the POS tags
under their words, a token's explanation on a click, and no console or script error. The checks are
shown to fail on a page whose drawing is wrong."""
import json

import pytest

from chromium import needs_chromium

from test_serve import Server, call_json, models  # noqa: F401  (models: the fixture of the small models)

pytestmark = needs_chromium
TEXT = "Jan Peeters woont in Gent. Hij werkt bij Philips in Eindhoven sinds maandag."


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):  # noqa: F811
    running = Server(models["pos"], models["ner"], folder=tmp_path_factory.mktemp("page"))
    yield running
    running.stop()


def wait_for(driver, script, seconds=20):
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: d.execute_script(script))


def problems(driver):
    out = [f"console: {entry['message']}" for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    error = driver.execute_script("return document.body.dataset.error || null")
    return out + ([f"script error: {error}"] if error else [])


def submit(driver, port, model, text):
    from selenium.webdriver.support.ui import Select

    driver.get(f"http://127.0.0.1:{port}/")
    wait_for(driver, "return document.body.dataset.ready === '1'")
    Select(driver.find_element("id", "model")).select_by_value(model)
    box = driver.find_element("id", "text")
    box.clear()
    box.send_keys(text)
    driver.find_element("id", "submit").click()
    wait_for(driver, "return document.body.dataset.done === '1'")


def drawn_entities(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#result mark.entity')).map(m => "
        "[m.dataset.label, Array.from(m.querySelectorAll('.token')).map(t => t.textContent).join(' ')])")


def test_entities_are_highlighted_as_the_api_tags_them_and_a_click_explains(browser, server):
    expected = call_json(server.port, "POST", "/v1/tag", {"model": "ner", "text": TEXT})[2]
    spans = [(s["label"], TEXT[s["start"]:s["end"]]) for sentence in expected["sentences"] for s in sentence["spans"]]
    assert spans, "the small model finds no entity in the text: nothing to check"
    submit(browser, server.port, "ner", TEXT)
    assert problems(browser) == []
    assert [tuple(e) for e in drawn_entities(browser)] == spans
    # the text reads as typed, the entities' labels and scores inside it
    words = browser.execute_script("return Array.from(document.querySelectorAll('#result .token'))"
                                   ".map(t => t.textContent)")
    assert words == [t["text"] for sentence in expected["sentences"] for t in sentence["tokens"]]
    label = browser.find_element("css selector", "#result mark.entity .entity-label")
    assert label.text == spans[0][0]
    # a click on the first entity's first word: its explanation
    browser.find_element("css selector", "#result mark.entity .token").click()
    wait_for(browser, "return document.querySelectorAll('#explanation table tr').length > 1")
    title = browser.find_element("css selector", "#explanation h2").text
    first = expected["sentences"][0]
    index = next(i for i, t in enumerate(first["tokens"]) if t["start"] == first["spans"][0]["start"])
    assert title == f"Why “{first['tokens'][index]['text']}” is {first['tags'][index]}"
    assert problems(browser) == []


def test_pos_tags_are_drawn_under_their_words(browser, server):
    text = "Mary left early. She was tired."
    expected = call_json(server.port, "POST", "/v1/tag", {"model": "pos", "text": text})[2]
    submit(browser, server.port, "pos", text)
    pairs = browser.execute_script("return Array.from(document.querySelectorAll('#result .tagged'))"
                                   ".map(t => [t.querySelector('.word').textContent, t.querySelector('.tag').textContent])")
    assert pairs == [[t["text"], tag] for s in expected["sentences"] for t, tag in zip(s["tokens"], s["tags"])]
    assert not browser.find_elements("css selector", "#result mark.entity")
    assert problems(browser) == []


def test_the_checks_catch_a_script_error_and_wrong_entities(browser, server):
    submit(browser, server.port, "ner", TEXT)
    drawn = drawn_entities(browser)
    browser.execute_script("document.querySelector('#result mark.entity').dataset.label = 'XYZ';"
                           "setTimeout(() => { throw new Error('broken on purpose'); }, 0);")
    wait_for(browser, "return Boolean(document.body.dataset.error)")
    assert drawn_entities(browser) != drawn
    found = problems(browser)
    assert any(p.startswith("script error: ") for p in found), json.dumps(found)
    assert any(p.startswith("console: ") for p in found), json.dumps(found)
