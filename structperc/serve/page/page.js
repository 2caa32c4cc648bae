// The page of `structperc serve`: models from /v1/models, tags from /v1/tag, a token's explanation from
// /v1/explain. Chunk labels (B-X/I-X) are drawn as displaCy draws entities; other labels under each word.
// document.body.dataset: ready = "1" once the models are listed, done = "1" after each drawing, error =
// the message of a script error.
"use strict";

window.addEventListener("error", (event) => { document.body.dataset.error = event.message; });
window.addEventListener("unhandledrejection", (event) => {
  document.body.dataset.error = String(event.reason && event.reason.message || event.reason);
});

const byId = (id) => document.getElementById(id);
const models = {};
let last = null; // {model, sentences} of the last answer

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function hue(label) {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}

function headers() {
  const out = {"Content-Type": "application/json"};
  const token = byId("token").value.trim();
  if (token) out["Authorization"] = "Bearer " + token;
  return out;
}

function say(text, isError) {
  const status = byId("status");
  status.textContent = text;
  status.classList.toggle("error", Boolean(isError));
}

async function call(path, body) {
  const response = await fetch(path, body === undefined ? {headers: headers()}
    : {method: "POST", headers: headers(), body: JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error ? answer.error.message : response.statusText);
  return answer;
}

function describeModel() {
  const m = models[byId("model").value];
  if (!m) return;
  const parts = [m.task || "", m.labels.length + " labels"];
  if (m.test) parts.push(Object.entries(m.test).map(([k, v]) => k + " " + v.toFixed(2)).join(", "));
  if (m.licence) parts.push(m.licence);
  byId("model-info").textContent = parts.filter(Boolean).join(" · ");
}

// one sentence: its tokens and the text between them, entities wrapping their tokens
function drawSentence(text, sentence, s) {
  const line = element("div", "sentence");
  line.dataset.sentence = s;
  const spans = sentence.spans || null;
  let at = sentence.tokens.length ? sentence.tokens[0].start : 0;
  let open = null; // [the mark, its span's end]
  // inside an open entity, before its label; else at the end of the line
  const put = (node) => open ? open[0].insertBefore(node, open[0].querySelector(".entity-label")) : line.append(node);
  sentence.tokens.forEach((token, t) => {
    const gap = text.slice(at, token.start);
    if (open && token.start >= open[1]) open = null;
    if (gap) put(document.createTextNode(gap));
    if (!open && spans) {
      const span = spans.find((x) => x.start === token.start);
      if (span) {
        const mark = element("mark", "entity");
        mark.dataset.label = span.label;
        mark.style.setProperty("--hue", hue(span.label));
        mark.append(element("span", "entity-label", span.label));
        if (span.score !== undefined) mark.append(element("span", "entity-score", span.score.toFixed(2)));
        line.append(mark);
        open = [mark, span.end];
      }
    }
    let node;
    if (spans) {
      node = element("span", "token", token.text);
    } else {
      node = element("span", "token tagged");
      node.append(element("span", "word", token.text), element("span", "tag", sentence.tags[t]));
    }
    node.dataset.sentence = s;
    node.dataset.token = t;
    node.title = sentence.tags[t];
    put(node);
    at = token.end;
  });
  return line;
}

function draw(text, answer) {
  last = answer;
  const result = byId("result");
  result.replaceChildren(...answer.sentences.map((sentence, s) => drawSentence(text, sentence, s)));
  byId("explanation").replaceChildren();
  const n = answer.sentences.reduce((sum, sentence) => sum + sentence.tokens.length, 0);
  const entities = answer.sentences.reduce((sum, sentence) => sum + (sentence.spans || []).length, 0);
  say(answer.sentences.length + " sentences, " + n + " tokens" +
      (models[answer.model].chunks ? ", " + entities + " spans" : "") + ". Click a word for why it has its label.");
  document.body.dataset.done = "1";
}

function number(x) {
  return x === null || x === undefined ? "" : x.toFixed(3);
}

function drawExplanation(e) {
  const box = byId("explanation");
  const title = element("h2", null, "Why “" + e.token + "” is " + e.label);
  const summary = element("p", null, e.other === null ? "No other label is allowed here."
    : "Runner-up: " + e.other + ", by a margin of " + number(e.margin) + " (emission " + number(e.emission) +
      " against " + number(e.other_emission) + ").");
  const table = element("table", "explanation");
  const head = element("tr");
  for (const h of ["feature", "value", "weight for " + e.label, "weight for " + (e.other || "-")]) head.append(element("th", null, h));
  table.append(head);
  for (const f of e.features) {
    const row = element("tr");
    row.append(element("td", null, f.feature), element("td", "number", String(f.value)),
               element("td", "number", number(f.weight)), element("td", "number", number(f.other_weight)));
    table.append(row);
  }
  for (const term of e.transitions) {
    const row = element("tr");
    row.append(element("td", null, term.term), element("td", "number", ""), element("td", "number", number(term.weight)),
               element("td", "number", ""));
    table.append(row);
  }
  box.replaceChildren(title, summary, table);
  box.dataset.token = e.index;
}

async function explainToken(node) {
  const s = Number(node.dataset.sentence), t = Number(node.dataset.token);
  const sentence = last.sentences[s];
  document.querySelectorAll(".token.selected").forEach((n) => n.classList.remove("selected"));
  node.classList.add("selected");
  try {
    const e = await call("/v1/explain", {model: last.model, tokens: sentence.tokens.map((x) => x.text), token: t});
    drawExplanation(e);
  } catch (error) {
    say(error.message, true);
  }
}

async function submit(event) {
  event.preventDefault();
  const text = byId("text").value;
  document.body.dataset.done = "";
  say("tagging…");
  try {
    draw(text, await call("/v1/tag", {model: byId("model").value, text: text}));
  } catch (error) {
    say(error.message, true);
    document.body.dataset.done = "1";
  }
}

async function start() {
  byId("tag-form").addEventListener("submit", submit);
  byId("model").addEventListener("change", describeModel);
  byId("result").addEventListener("click", (event) => {
    const node = event.target.closest(".token");
    if (node && models[last.model].explain) explainToken(node);
  });
  try {
    const answer = await call("/v1/models");
    for (const m of answer.models) {
      models[m.name] = m;
      const option = element("option", null, m.name);
      option.value = m.name;
      byId("model").append(option);
    }
    byId("model").value = answer.default_model;
    describeModel();
  } catch (error) {
    say(error.message + " (a server with --token-file: give the token below, then reload)", true);
  }
  document.body.dataset.ready = "1";
}

start();
