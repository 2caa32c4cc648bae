"""The HTML report of `eval --report` in a real headless Chromium (Debian's chromium and
chromium-driver, through Selenium): the page draws its tables and plots, the type and kind filters
show what they should, an explanation opens, and no script error or console error happens. The checks
themselves are shown to fail on a page whose script throws and on an empty table.

Set REPORT_SCREENSHOT=docs/img/report.png to keep the chunk report's screenshot for the docs page.
"""
import json
import os
import shutil
from pathlib import Path

import pytest

from chromium import needs_chromium
from typer.testing import CliRunner

from structperc.cli.main import app

pytestmark = needs_chromium


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def first_sentences(source, target, n):
    chunks = [c for c in source.read_text().split("\n\n") if c.strip()]
    target.write_text("\n\n".join(chunks[:n]) + "\n\n")
    return target


@pytest.fixture(scope="module")
def reports(corpus_mirror, tmp_path_factory):
    """A chunk report (with a training curve: trained with --dev) and a POS report, with eval's JSON."""
    folder = tmp_path_factory.mktemp("report")
    train = first_sentences(corpus_mirror / "conll2000" / "train.txt", folder / "train.txt", 300)
    test = first_sentences(corpus_mirror / "conll2000" / "test.txt", folder / "test.txt", 80)
    out = {}
    here = os.getcwd()
    os.chdir(folder)  # the page names the files as given: short names
    try:
        for task, label in (("chunk", "chunk"), ("pos", "pos")):
            run("train", train.name, "--model", f"{task}.npz", "--columns", "word,pos,chunk", "--label", label,
                "--epochs", 3, "--dev", test.name, "--quiet")
            result = json.loads(run("eval", test.name, "--model", f"{task}.npz", "--json", "--report", f"{task}.html"))
            out[task] = (folder / f"{task}.html", result)
    finally:
        os.chdir(here)
    return out


def open_page(driver, path):
    driver.get(Path(path).resolve().as_uri())
    driver.get_log("browser")  # what an earlier page left
    driver.refresh()


def page_problems(driver):
    """Everything that makes a drawn page wrong: console errors, a script error, a page the script
    did not finish drawing, a table without rows, a plot without marks."""
    problems = [f"console: {entry['message']}" for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    state = driver.execute_script("return [document.body.dataset.ready || null, document.body.dataset.error || null]")
    if state[1]:
        problems.append(f"script error: {state[1]}")
    if state[0] != "1":
        problems.append("the script did not finish drawing")
    for css in ("table.summary", "table.per-type", "table.confusions"):
        rows = driver.execute_script(f"return document.querySelectorAll('{css} tbody tr, {css} > tr').length")
        if not rows:
            problems.append(f"{css} has no rows")
    for css in ("svg.heatmap", "svg.transitions"):
        if not driver.execute_script(f"return document.querySelectorAll('{css} rect.cell').length"):
            problems.append(f"{css} draws no cell")
    return problems


def shown_errors(driver):
    """[type, kind] of each error named on the page shown, sentence by sentence."""
    return driver.execute_script("return Array.from(document.querySelectorAll('#error-list .error .err'))"
                                 ".map(e => [e.dataset.type, e.dataset.kind])")


def shown_sentences(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#error-list .error')).map(e => Number(e.dataset.sentence))")


def first_page(records, keep=lambda record: True, page=25):
    """The sentences of the first page of the errors that ``keep`` keeps, in the order of their first
    error, and their errors: what the page must show, from the records the page holds."""
    groups = {}
    for record in records:
        if keep(record):
            groups.setdefault(record["sentence"], []).append(record)
    return list(groups.items())[:page], sum(len(errors) for errors in groups.values()), len(groups)


def page_records(driver):
    return driver.execute_script("return JSON.parse(document.getElementById('report-data').textContent).records")


def choose(driver, select_id, value):
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select_id)).select_by_value(value)


def test_chunk_report_draws_filters_and_explains(browser, reports, tmp_path):
    page, result = reports["chunk"]
    open_page(browser, page)
    assert page_problems(browser) == []
    shot = tmp_path / "top.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # the per-type table: one row per type of eval's JSON, with its counts
    rows = browser.execute_script("return Array.from(document.querySelectorAll('table.per-type tbody tr'))"
                                  ".map(r => Array.from(r.cells).map(c => c.textContent))")
    assert [r[0] for r in rows] == list(result["per_type"])
    for row in rows:
        assert int(row[5]) == result["per_type"][row[0]]["found"]
    n_types = len(result["confusion"]["labels"])
    assert browser.execute_script("return document.querySelectorAll('svg.heatmap:not(.transitions) rect.cell')"
                                  ".length") == n_types * n_types
    assert browser.execute_script("return document.querySelectorAll('svg.lineplot polyline.series').length") >= 1
    total = sum(result["errors"].values())
    records = page_records(browser)
    assert len(records) == total
    page, _, n_sentences = first_page(records)
    assert browser.find_element("id", "page-info").text.endswith(f"of {n_sentences} ({total} errors)")
    assert shown_sentences(browser) == [sentence for sentence, _ in page]
    assert len(shown_errors(browser)) == sum(len(errors) for _, errors in page)
    # the type filter: only errors of that type, as many as eval counts
    kind_of_phrase = max(result["per_type"], key=lambda t: sum(result["per_type"][t]["errors"].values()))
    choose(browser, "filter-type", kind_of_phrase)
    expected = sum(result["per_type"][kind_of_phrase]["errors"].values())
    page, errors, _ = first_page(records, lambda r: r["type"] == kind_of_phrase)
    shown = shown_errors(browser)
    assert errors == expected and {t for t, _ in shown} == {kind_of_phrase}
    assert len(shown) == sum(len(errors) for _, errors in page)
    assert browser.find_element("id", "page-info").text.endswith(f"({expected} errors)")
    # and the kind filter on top of it
    kind = max(result["errors"], key=lambda k: result["per_type"][kind_of_phrase]["errors"][k])
    choose(browser, "filter-kind", kind)
    page, both, _ = first_page(records, lambda r: r["type"] == kind_of_phrase and r["kind"] == kind)
    assert both == result["per_type"][kind_of_phrase]["errors"][kind]
    assert shown_errors(browser) == [[kind_of_phrase, kind]] * sum(len(errors) for _, errors in page)
    # the explanation of the first error shown
    browser.find_element("css selector", "#error-list .explain-button").click()
    table = browser.find_element("css selector", "#error-list table.explanation")
    assert table.is_displayed() and table.text.startswith("score ")
    assert len(table.find_elements("css selector", "tr")) > 3
    assert page_problems(browser) == []
    # the errors section, filtered, with the explanation open: the docs page's picture
    browser.execute_script("document.getElementById('errors').scrollIntoView()")
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    if os.environ.get("REPORT_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["REPORT_SCREENSHOT"])


def test_pos_report_draws_and_filters_by_tag(browser, reports):
    page, result = reports["pos"]
    open_page(browser, page)
    assert page_problems(browser) == []
    rows = browser.execute_script("return Array.from(document.querySelectorAll('table.per-type tbody tr'))"
                                  ".map(r => r.cells[0].textContent)")
    assert rows == list(result["per_type"])
    gold, predicted, count = result["confusions"][0]
    choose(browser, "filter-type", gold)
    shown = shown_errors(browser)
    assert shown and {t for t, _ in shown} == {gold} and {k for _, k in shown} == {"wrong_tag"}
    wrong = sum(c for g, _, c in result["confusions"] if g == gold)
    assert browser.find_element("id", "page-info").text.endswith(f"({wrong} errors)")
    # the top state features of a label, drawn on choosing it
    choose(browser, "feature-label", predicted)
    assert browser.find_elements("css selector", "#feature-tables table.features tr")
    assert page_problems(browser) == []


def test_a_sentence_is_one_entry_with_every_error_marked(browser, reports):
    """Each sentence with errors is listed once, over all the pages; one with several errors names
    each and outlines each wrong token."""
    page, _ = reports["pos"]
    open_page(browser, page)
    records = page_records(browser)
    counts = {}
    for record in records:
        counts[record["sentence"]] = counts.get(record["sentence"], 0) + 1
    listed = []
    while True:
        listed += shown_sentences(browser)
        if not browser.find_element("id", "page-next").is_enabled():
            break
        browser.find_element("id", "page-next").click()
    assert listed == list(counts)  # each once, in the order of its first error
    sentence, most = max(counts.items(), key=lambda item: item[1])
    assert most >= 3
    open_page(browser, page)
    while sentence not in shown_sentences(browser):
        browser.find_element("id", "page-next").click()
    item = browser.find_element("css selector", f'#error-list .error[data-sentence="{sentence}"]')
    assert len(item.find_elements("css selector", ".head .err")) == most
    predicted = item.find_elements("css selector", ".row")[1]
    assert len(predicted.find_elements("css selector", ".tok.wrong.focus")) == most
    assert page_problems(browser) == []


def test_the_checks_catch_a_script_error_and_an_empty_table(browser, reports, tmp_path):
    page, _ = reports["pos"]
    text = page.read_text()
    broken = tmp_path / "broken.html"
    listener = 'document.getElementById("filter-type").addEventListener'
    assert listener in text
    broken.write_text(text.replace(listener, listener.replace("filter-type", "no-such")))
    open_page(browser, broken)
    problems = page_problems(browser)
    assert any(p.startswith("script error") for p in problems)
    assert any(p.startswith("console") for p in problems)
    empty = tmp_path / "empty.html"
    start = text.index('<table class="per-type">')
    body = text.index("<tbody>", start) + len("<tbody>")
    empty.write_text(text[:body] + text[text.index("</tbody>", body):])
    open_page(browser, empty)
    assert page_problems(browser) == ["table.per-type has no rows"]
