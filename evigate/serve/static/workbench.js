// evigate Trace Workbench: the code every page shares (served from the package; no third-party code).
// Data comes from /fragments/* and /v1/* with the API token as an Authorization header; the token lives in
// sessionStorage (this tab only) and is never put in a URL. Everything inserted as HTML is rendered and escaped
// by the server; text from the API (SSE events) is only ever set as textContent. Each page's own script
// (ask.js, session.js, sessions.js, verify.js) registers its start function in PAGES.
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

document.addEventListener("DOMContentLoaded", () => {
  const logout = $("#logout");
  logout.hidden = !sessionStorage.getItem(TOKEN_KEY);
  logout.addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); logout.hidden = true; });
  const start = PAGES[document.body.dataset.page];
  if (start) start();
});
