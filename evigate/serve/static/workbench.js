// evigate Trace Workbench: the pages' only script (served from the package; no third-party code).
// Data comes from /fragments/* and /v1/* with the API token as an Authorization header; the token lives in
// sessionStorage (this tab only) and is never put in a URL. Everything inserted as HTML is rendered and escaped
// by the server; text from the API (SSE events) is only ever set as textContent.
"use strict";

const TOKEN_KEY = "evigate.token";
const HISTORY_KEY = "evigate.questions";
const KIND_TEXT = {
  NORMAL: "NORMAL · every statement is checked against the evidence",
  LOW_CONFID_WITH_DISCLAIMER: "LOW CONFIDENCE · shown with a disclaimer",
  DEGRADED: "DEGRADED · the evidence did not support an answer",
};

function $(selector, root) { return (root || document).querySelector(selector); }
function $$(selector, root) { return Array.from((root || document).querySelectorAll(selector)); }
function say(text) { $("#status").textContent = text || ""; }

function authHeaders(extra) {
  const headers = Object.assign({}, extra || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  return headers;
}

// One fetch with the token; a 401 shows the login form and retries once the user signed in.
async function authFetch(url, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = authHeaders(opts.headers);
  opts.credentials = "omit";
  const response = await fetch(url, opts);
  if (response.status === 401) {
    await askForToken();
    return authFetch(url, options);
  }
  return response;
}

function askForToken() {
  return new Promise((resolve) => {
    const form = $("#login");
    form.hidden = false;
    say("This server needs its API token.");
    $("#token").focus();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("#token").value);
      $("#token").value = "";
      form.hidden = true;
      $("#logout").hidden = false;
      say("");
      resolve();
    }, { once: true });
  });
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error || JSON.stringify(body);
  } catch (_) {
    return response.status + " " + response.statusText;
  }
}

// Inserts a server-rendered, escaped fragment.
async function loadFragment(target, url, options) {
  const response = await authFetch(url, options);
  if (!response.ok) {
    target.textContent = "";
    say("Error: " + await errorText(response));
    return false;
  }
  target.innerHTML = await response.text();
  say("");
  return true;
}

// ---- ask page ------------------------------------------------------------------------------------------------

function remember(entry) {
  const list = JSON.parse(sessionStorage.getItem(HISTORY_KEY) || "[]").filter((e) => e.id !== entry.id);
  list.unshift(entry);
  sessionStorage.setItem(HISTORY_KEY, JSON.stringify(list.slice(0, 50)));
  showHistory();
}

function showHistory() {
  const list = $("#history");
  if (!list) return;
  list.replaceChildren();
  for (const entry of JSON.parse(sessionStorage.getItem(HISTORY_KEY) || "[]")) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "/sessions/" + encodeURIComponent(entry.id);
    link.textContent = entry.query;
    const kind = document.createElement("span");
    kind.className = "badge o-" + (entry.output_type || "none");
    kind.textContent = entry.output_type || "…";
    item.append(link, " ", kind);
    list.append(item);
  }
}

function stageItem(event) {
  const key = "stage-" + (event.round || 0) + "-" + event.stage;
  let item = document.getElementById(key);
  if (!item) {
    item = document.createElement("li");
    item.id = key;
    item.className = "stage running";
    $("#stages").append(item);
  }
  return item;
}

function showEvent(name, event) {
  if (name === "queued") {
    say("queued · " + event.running + " running, " + event.queued + " waiting");
  } else if (name === "session_started") {
    say("session " + event.session_id + " started");
  } else if (name === "stage_started") {
    const item = stageItem(event);
    item.dataset.stage = event.stage;
    item.textContent = "round " + (event.round || 1) + " · " + event.stage + " …";
  } else if (name === "tool_call") {
    const item = document.createElement("li");
    item.className = "stage tool " + (event.ok ? "done" : "failed");
    item.dataset.stage = "tool_call";
    item.textContent = "round " + (event.round || 1) + " · executor called " + event.tool
      + (event.invocation_id != null ? " → invocation " + event.invocation_id : "") + " · "
      + (event.ok ? "ok" : "failed" + (event.detail ? ": " + event.detail : ""));
    $("#stages").append(item);
  } else if (name === "stage_finished") {
    const item = stageItem(event);
    item.dataset.stage = event.stage;
    item.className = "stage " + (event.ok ? "done" : "failed");
    item.textContent = "round " + (event.round || 1) + " · " + event.stage + " · " + (event.ok ? "ok" : "failed")
      + (event.stage_seconds != null ? " · " + event.stage_seconds.toFixed(2) + " s" : "")
      + (event.detail ? " · " + event.detail : "");
  }
}

function showResult(result, query) {
  const box = $("#answer");
  box.hidden = false;
  box.className = "answer o-" + result.output_type;
  $("#answer-kind").textContent = KIND_TEXT[result.output_type] || result.output_type;
  $("#answer-text").textContent = result.answer;
  $("#answer-meta").textContent = "verdict " + result.verdict + " · groundedness "
    + Number(result.groundedness_score).toFixed(2) + " · rounds " + result.rounds;
  const link = $("#answer-link");
  link.href = "/sessions/" + encodeURIComponent(result.session_id);
  link.textContent = "Open session " + result.session_id + " in the workbench";
  remember({ id: result.session_id, query: query, output_type: result.output_type });
  link.focus();
}

// Server-sent events over a POST (EventSource can neither POST nor send a header): read the stream by hand.
async function ask(event) {
  event.preventDefault();
  const query = $("#query").value;
  if (!query.trim()) { say("The question is empty."); return; }
  const body = { query: query };
  if ($("#locale").value) body.locale = $("#locale").value;
  $("#stages").replaceChildren();
  $("#answer").hidden = true;
  $("#ask-button").disabled = true;
  try {
    const response = await authFetch("/v1/diagnoses?stream=true", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok) { say("Error: " + await errorText(response)); return; }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split("\n");
        const name = (lines.find((l) => l.startsWith("event: ")) || "").slice(7);
        const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (!name || !data) continue;
        const payload = JSON.parse(data);
        if (name === "result") showResult(payload, query);
        else if (name === "error") say("The diagnosis failed: " + payload.error);
        else showEvent(name, payload);
      }
    }
  } catch (error) {
    say("Connection lost: " + error.message);
  } finally {
    $("#ask-button").disabled = false;
  }
}

// ---- session page: claims, bindings and the gate's spans -----------------------------------------------------

function clearMarks() {
  for (const pre of $$("pre.output[data-highlighted]")) {
    pre.textContent = pre.textContent;  // drops the <mark>s, keeps the text
    delete pre.dataset.highlighted;
  }
}

// An invocation's body (arguments, whole output) is loaded when it is first opened: the page stays light.
// One load per invocation: opening it and highlighting in it at once share the same request.
const invocationLoads = new Map();

function loadInvocation(details) {
  const key = details.dataset.invocation;
  if (!invocationLoads.has(key)) {
    const session = $("#workbench").dataset.session;
    const url = "/fragments/sessions/" + encodeURIComponent(session) + "/invocations/" + key;
    const loading = loadFragment($(".inv-body", details), url).then((ok) => {
      if (!ok) invocationLoads.delete(key);  // an error may pass (a token typed later): try again next time
      return ok;
    });
    invocationLoads.set(key, loading);
  }
  return invocationLoads.get(key);
}

// The gate records offsets in code points (Python's str); JavaScript strings index UTF-16 units.
function utf16Offsets(text, points) {
  const wanted = new Set(points);
  const found = new Map();
  let point = 0;
  for (let unit = 0; ; point += 1) {
    if (wanted.has(point)) found.set(point, unit);
    if (unit >= text.length) break;
    unit += text.codePointAt(unit) > 0xffff ? 2 : 1;
  }
  return found;
}

// Marks the Gatekeeper's own spans [start, end) in the output of one invocation.
async function highlight(invocationId, spans) {
  const details = document.getElementById("inv-" + invocationId);
  if (!details) return null;
  details.open = true;
  if (!await loadInvocation(details)) return null;
  const pre = $("pre.output", details);
  const text = pre.textContent;
  const own = spans.filter((s) => String(s.invocation) === String(invocationId));
  const units = utf16Offsets(text, own.flatMap((s) => [s.start, s.end]));
  const mine = own.filter((s) => units.has(s.start) && units.has(s.end))  // past the output: no mark at all
    .map((s) => ({ start: units.get(s.start), end: units.get(s.end) }))
    .sort((a, b) => a.start - b.start);
  const pieces = [];
  let position = 0;
  let first = null;
  for (const span of mine) {
    if (span.start < position) continue;  // overlapping segments: the first one is shown
    pieces.push(document.createTextNode(text.slice(position, span.start)));
    const mark = document.createElement("mark");
    mark.className = "gate-match";
    mark.textContent = text.slice(span.start, span.end);
    pieces.push(mark);
    first = first || mark;
    position = span.end;
  }
  pieces.push(document.createTextNode(text.slice(position)));
  pre.replaceChildren(...pieces);
  pre.dataset.highlighted = "1";
  (first || details).scrollIntoView({ block: "center" });
  return first;
}

async function openBinding(button) {
  clearMarks();
  const spans = JSON.parse(button.dataset.spans || "[]");
  const mark = await highlight(button.dataset.invocation, spans);
  const summary = $("summary", document.getElementById("inv-" + button.dataset.invocation));
  if (summary) summary.focus({ preventScroll: true });
  say(mark ? "Invocation " + button.dataset.invocation + ": the Gatekeeper's match is highlighted."
    : "Invocation " + button.dataset.invocation + ": no span of the output was matched for this binding.");
}

function selectClaim(claimId) {
  const article = $$("article.claim").find((a) => a.dataset.claim === claimId);
  if (!article) return;
  for (const other of $$("article.claim.selected")) {
    other.classList.remove("selected");
    $(".claim-head", other).setAttribute("aria-expanded", "false");
  }
  article.classList.add("selected");
  $(".claim-head", article).setAttribute("aria-expanded", "true");
  for (const sentence of $$("button.sentence")) {
    sentence.classList.toggle("selected", sentence.dataset.claims.split(" ").includes(claimId));
  }
  const button = $("button.show-binding", article);
  article.focus({ preventScroll: !!button });
  if (button) openBinding(button);
  else { clearMarks(); article.scrollIntoView({ block: "center" }); }
}

async function loadSession() {
  const root = $("#workbench");
  const ok = await loadFragment(root, "/fragments/sessions/" + encodeURIComponent(root.dataset.session));
  if (!ok) return;
  // when the workbench is in the page and about to be drawn (bench/workbench.py reads it)
  requestAnimationFrame(() => { root.dataset.loadedMs = String(Math.round(performance.now())); });
  document.title = "Session " + root.dataset.session + " · evigate workbench";
  root.addEventListener("click", (event) => {
    const sentence = event.target.closest("button.sentence");
    if (sentence) { selectClaim(sentence.dataset.claims.split(" ")[0]); return; }
    const head = event.target.closest("button.claim-head");
    if (head) { selectClaim(head.dataset.claim); return; }
    const binding = event.target.closest("button.show-binding");
    if (binding) openBinding(binding);
  });
  // capture: "toggle" does not bubble
  root.addEventListener("toggle", (event) => {
    if (event.target.matches("details.invocation") && event.target.open) loadInvocation(event.target);
  }, true);
}

// ---- sessions list ---------------------------------------------------------------------------------------------

function filterParams(offset) {
  const params = new URLSearchParams();
  for (const field of $$("#filters [name]")) {
    if (!field.value) continue;
    // datetime-local has no zone: the list is in UTC, so is the filter
    params.set(field.name, field.type === "datetime-local" ? field.value + "Z" : field.value);
  }
  if (offset) params.set("offset", String(offset));
  return params;
}

async function loadSessions(offset) {
  const params = filterParams(offset);
  const shown = new URLSearchParams(params);
  history.replaceState(null, "", shown.toString() ? "?" + shown.toString() : location.pathname);
  await loadFragment($("#list"), "/fragments/sessions?" + params.toString());
}

function initSessions() {
  const initial = new URLSearchParams(location.search);
  for (const field of $$("#filters [name]")) {
    const value = initial.get(field.name);
    if (value) field.value = field.type === "datetime-local" ? value.replace(/Z$/, "") : value;
  }
  $("#filters").addEventListener("submit", (event) => { event.preventDefault(); loadSessions(0); });
  $("#list").addEventListener("click", (event) => {
    const button = event.target.closest("button.page");
    if (button) loadSessions(Number(button.dataset.offset));
  });
  loadSessions(Number(initial.get("offset") || 0));
}

// ---- verify page -----------------------------------------------------------------------------------------------

function initVerify() {
  $("#add-passage").addEventListener("click", () => {
    const number = $$("#passages textarea").length + 1;
    const label = document.createElement("label");
    label.htmlFor = "passage-" + number;
    label.textContent = "Passage " + number;
    const area = document.createElement("textarea");
    area.id = "passage-" + number;
    area.className = "passage";
    area.rows = 5;
    $("#passages").append(label, area);
    area.focus();
  });
  $("#verify-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const passages = $$("#passages textarea").map((area) => area.value).filter((text) => text.trim());
    const body = JSON.stringify({ answer: $("#verify-answer").value, passages: passages });
    say("verifying …");
    await loadFragment($("#verify-result"), "/fragments/verify", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: body,
    });
  });
}

// ---- start -----------------------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  const logout = $("#logout");
  logout.hidden = !sessionStorage.getItem(TOKEN_KEY);
  logout.addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); logout.hidden = true; });
  const page = document.body.dataset.page;
  if (page === "ask") {
    $("#ask-form").addEventListener("submit", ask);
    showHistory();
  } else if (page === "session") {
    loadSession();
  } else if (page === "sessions") {
    initSessions();
  } else if (page === "verify") {
    initVerify();
  }
});
