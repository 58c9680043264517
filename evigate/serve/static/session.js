// evigate Trace Workbench, session page: claims, bindings and the Gatekeeper's spans in the cited outputs.
"use strict";

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
  markLoaded();
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

// The workbench fragment of the session this page's path names, asked for before the page is even parsed; the
// page uses it only if it is the URL it would ask for itself (#workbench's data-session, the server's reading).
function fetchSessionEarly() {
  try {
    fetchEarly("/fragments/sessions/" + encodeURIComponent(decodeURIComponent(location.pathname.split("/")[2])));
  } catch (_) { /* a malformed path: the page asks the ordinary way */ }
}

PAGES.session = loadSession;
fetchSessionEarly();
