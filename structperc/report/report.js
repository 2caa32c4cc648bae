// The report's errors, explanations and state features, drawn from the JSON the page holds: one entry
// per sentence with all its errors (those the filters keep) marked, a page of sentences at a time so
// that thousands of them stay quick. Sets body[data-ready] when drawn and
// body[data-error] when a script error happens (the browser tests read both).
"use strict";
window.addEventListener("error", function (event) {
  document.body.dataset.error = String(event.message || event);
});

(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const PAGE = 25;
  let page = 0;
  let shown = bySentence(data.records);

  // the errors grouped by sentence, in the order of each sentence's first error
  function bySentence(records) {
    const groups = new Map();
    for (const record of records) {
      if (!groups.has(record.sentence)) groups.set(record.sentence, []);
      groups.get(record.sentence).push(record);
    }
    return Array.from(groups.values());
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "cls") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    return node;
  }

  function colour(type) {
    let h = 0;
    for (const ch of type) h = (h * 31 + ch.charCodeAt(0)) % 360;
    return "hsl(" + h + ", 70%, 82%)";
  }

  function fmt(x) {
    return (x >= 0 ? "+" : "") + x.toFixed(3);
  }

  // a chunk task's sentence: its words with the given spans highlighted; focus: the [first, last] of
  // each error, whose spans are outlined
  function spanRow(words, spans, focus) {
    const out = [];
    let t = 0;
    const sorted = spans.slice().sort((a, b) => a[1] - b[1]);
    for (const [type, first, last] of sorted) {
      if (t < first) out.push(words.slice(t, first).join(" ") + " ");
      const inFocus = focus.some(f => first <= f[1] && f[0] <= last);
      out.push(el("mark", {cls: "ent" + (inFocus ? " focus" : ""), style: "background:" + colour(type)},
                  [words.slice(first, last + 1).join(" "), el("span", {cls: "type", text: type})]));
      out.push(" ");
      t = last + 1;
    }
    if (t < words.length) out.push(words.slice(t).join(" "));
    return out;
  }

  // a token task's sentence: each word over its tag, wrong tokens marked; focus: the Set of the tokens
  // of the errors shown, outlined
  function tagRow(sentence, labels, focus) {
    return sentence.words.map((word, t) => {
      const wrong = sentence.gold[t] !== sentence.predicted[t];
      return el("span", {cls: "tok" + (wrong ? " wrong" : "") + (focus.has(t) ? " focus" : "")},
                [word, el("span", {cls: "tag", text: labels[t]})]);
    });
  }

  function row(side, children) {
    return el("div", {cls: "row"}, [el("span", {cls: "side", text: side}), el("span", {cls: "words"}, children)]);
  }

  // an explanation as content.compact_explanation writes it
  function explanationTable(sentence, compact) {
    const [score, emission, transition, end, tokens] = compact;
    const name = i => data.names[i];
    const table = el("table", {cls: "explanation"});
    table.appendChild(el("tr", {}, [el("th", {text: "score " + fmt(score) + " = emission " + fmt(emission) +
      " + transitions " + fmt(transition) + " + end " + fmt(end), colspan: "3"})]));
    table.appendChild(el("tr", {}, [el("th", {text: "label"}), el("th", {text: "other"}), el("th", {text: "term"})]));
    tokens.forEach((token, t) => {
      const [label, other, margin, labelEmission, otherEmission, features, terms] = token;
      const wrong = sentence.gold[t] !== sentence.predicted[t];
      const versus = other === null ? "no other label fits the rest of the path" :
        (wrong ? "gold " : "runner-up ") + other + (margin === null ? " (not allowed here)" : ", margin " + fmt(margin));
      table.appendChild(el("tr", {cls: "token" + (wrong ? " wrong" : "")}, [el("th", {colspan: "3",
        text: (t + 1) + " " + sentence.words[t] + ": " + label + " (" + versus + ")"})]));
      table.appendChild(el("tr", {}, [el("td", {text: fmt(labelEmission)}),
        el("td", {text: otherEmission === null ? "" : fmt(otherEmission)}),
        el("td", {cls: "feat", text: "emission of " + label + (other ? " against " + other : "")})]));
      for (const [feature, value, weight, otherWeight] of features) {
        table.appendChild(el("tr", {}, [el("td", {cls: weight >= 0 ? "pos" : "neg", text: fmt(value * weight)}),
          el("td", {text: other === null ? "" : fmt(value * otherWeight)}),
          el("td", {cls: "feat", text: name(feature)})]));
      }
      for (const [term, weight] of terms) {
        table.appendChild(el("tr", {}, [el("td", {text: fmt(weight)}), el("td", {}),
          el("td", {cls: "feat", text: "transition " + name(term)})]));
      }
    });
    table.appendChild(el("tr", {}, [el("td", {text: fmt(end)}), el("td", {}), el("td", {cls: "feat", text: "end"})]));
    return table;
  }

  // one sentence with its errors (records): each named in the head, all of them outlined
  function errorItem(records) {
    const index = records[0].sentence;
    const sentence = data.sentences[String(index)];
    const head = el("div", {cls: "head"}, ["sentence " + (index + 1) + (sentence.where ? " (" + sentence.where + ")" : "") +
      ", " + records.length + (records.length === 1 ? " error: " : " errors: ")]);
    records.forEach((record, i) => {
      if (i) head.appendChild(document.createTextNode("; "));
      head.appendChild(el("span", {cls: "err", "data-type": record.type, "data-kind": record.kind},
        [el("span", {cls: "kind", text: data.kindNames[record.kind] || record.kind}), " " + record.type +
         (record.kind === "wrong_tag" ? " predicted " + record.predicted : "")]));
    });
    const item = el("div", {cls: "error", "data-sentence": String(index)}, [head]);
    if (data.chunks) {
      const focus = records.map(r => r.gold || (r.predicted.length ? [r.predicted[0][1], r.predicted[0][2]] : null))
        .filter(f => f !== null);
      item.appendChild(row("gold", spanRow(sentence.words, sentence.gold_spans, focus)));
      item.appendChild(row("predicted", spanRow(sentence.words, sentence.predicted_spans, focus)));
    } else {
      const focus = new Set(records.map(r => r.token));
      item.appendChild(row("gold", tagRow(sentence, sentence.gold, focus)));
      item.appendChild(row("predicted", tagRow(sentence, sentence.predicted, focus)));
    }
    const explanation = data.explanations[String(index)];
    if (explanation) {
      const panel = el("div", {cls: "explain"});
      panel.hidden = true;
      const button = el("button", {type: "button", cls: "explain-button", text: "explain"});
      button.addEventListener("click", function () {
        if (!panel.firstChild) panel.appendChild(explanationTable(sentence, explanation));
        panel.hidden = !panel.hidden;
      });
      head.appendChild(document.createTextNode(" "));
      head.appendChild(button);
      item.appendChild(panel);
    }
    return item;
  }

  function drawErrors() {
    const list = document.getElementById("error-list");
    list.replaceChildren();
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    const start = page * PAGE;
    for (const records of shown.slice(start, start + PAGE)) list.appendChild(errorItem(records));
    const errors = shown.reduce((n, records) => n + records.length, 0);
    document.getElementById("page-info").textContent = shown.length ?
      "sentences " + (start + 1) + "-" + Math.min(start + PAGE, shown.length) + " of " + shown.length + " (" +
      errors + (errors === 1 ? " error)" : " errors)") : "no error matches";
    document.getElementById("page-prev").disabled = page === 0;
    document.getElementById("page-next").disabled = page >= pages - 1;
  }

  function filter() {
    const type = document.getElementById("filter-type").value;
    const kind = document.getElementById("filter-kind").value;
    shown = bySentence(data.records.filter(r => (!type || r.type === type) && (!kind || r.kind === kind)));
    page = 0;
    drawErrors();
  }

  function drawFeatures() {
    const label = document.getElementById("feature-label").value;
    const box = document.getElementById("feature-tables");
    box.replaceChildren();
    const top = data.topFeatures[label] || {positive: [], negative: []};
    for (const [sign, rows] of [["positive", top.positive], ["negative", top.negative]]) {
      const table = el("table", {cls: "features " + sign}, [el("tr", {}, [el("th", {text: "weight"}),
        el("th", {text: sign + " features of " + label})])]);
      for (const [feature, weight] of rows) {
        table.appendChild(el("tr", {}, [el("td", {cls: weight >= 0 ? "pos" : "neg", text: fmt(weight)}),
          el("td", {cls: "feat", text: feature})]));
      }
      box.appendChild(table);
    }
  }

  document.getElementById("filter-type").addEventListener("change", filter);
  document.getElementById("filter-kind").addEventListener("change", filter);
  document.getElementById("page-prev").addEventListener("click", function () { page -= 1; drawErrors(); });
  document.getElementById("page-next").addEventListener("click", function () { page += 1; drawErrors(); });
  document.getElementById("feature-label").addEventListener("change", drawFeatures);
  drawErrors();
  drawFeatures();
  document.body.dataset.ready = "1";
})();
