// evigate Trace Workbench: the code every page shares (served from the package; no third-party code).
// Data comes from /fragments/* and /v1/* with the API token as an Authorization header; the token lives in
// sessionStorage (this tab only) and is never put in a URL. Everything inserted as HTML is rendered and escaped
// by the server; text from the API (SSE events) is only ever set as textContent. Each page's own script
// (ask.js, session.js, sessions.js, verify.js) registers its start function in PAGES, which runs once the document
// is parsed; the scripts themselves run in <head>, before the style sheet, so a page can ask for its data at once.
"use strict";

const TOKEN_KEY = "evigate.token";
const PAGES = {};

function $(selector, root) { return (root || document).querySelector(selector); }
function $$(selector, root) { return Array.from((root || document).querySelectorAll(selector)); }
function say(text) { $("#status").textContent = text || ""; }

function authHeaders(extra) {
  const headers = Object.assign({}, extra || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  return headers;
}

// A page's data, requested while the page itself is still being parsed (the scripts run in <head>, before the
// style sheet): the server prepares it while the browser builds the page. Only the page's first authFetch may use
// it, and only for a GET of the very same URL (else it is dropped); a 401 or a failure is asked again the ordinary way.
const early = { url: null, response: null };

function fetchEarly(url) {
  early.url = url;
  early.response = fetch(url, { headers: authHeaders(), credentials: "omit" }).catch(() => null);
}

async function takeEarly(url, options) {
  const same = !options && early.url === url;
  early.url = null;
  if (!same) return null;
  const response = await early.response;
  return response && response.status !== 401 ? response : null;
}

// One fetch with the token; a 401 shows the login form and retries once the user signed in.
async function authFetch(url, options) {
  const ready = await takeEarly(url, options);
  if (ready) return ready;
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

// The page is ready: its content is in the document and the next frame is about to be drawn. Each page's script
// calls it once; bench/workbench.py reads body[data-loaded-ms] (milliseconds since the navigation started).
function markLoaded() {
  requestAnimationFrame(() => { document.body.dataset.loadedMs = String(Math.round(performance.now())); });
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

document.addEventListener("DOMContentLoaded", () => {
  const logout = $("#logout");
  logout.hidden = !sessionStorage.getItem(TOKEN_KEY);
  logout.addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); logout.hidden = true; });
  const start = PAGES[document.body.dataset.page];
  if (start) start();
});
