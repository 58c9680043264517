// evigate Trace Workbench, sessions page: filters (kept in the URL) and pages of the list.
"use strict";

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
  loadSessions(Number(initial.get("offset") || 0)).then(markLoaded);
}

PAGES.sessions = initSessions;
// The list as this page's URL filters it (the URL loadSessions keeps), asked for before the page is parsed.
fetchEarly("/fragments/sessions?" + location.search.slice(1));
