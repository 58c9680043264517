// evigate Trace Workbench, ask page: the question, live stages from the server-sent events, the answer.
"use strict";

const HISTORY_KEY = "evigate.questions";
const KIND_TEXT = {
  NORMAL: "NORMAL · every statement is checked against the evidence",
  LOW_CONFID_WITH_DISCLAIMER: "LOW CONFIDENCE · shown with a disclaimer",
  DEGRADED: "DEGRADED · the evidence did not support an answer",
};

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

PAGES.ask = () => {
  $("#ask-form").addEventListener("submit", ask);
  showHistory();
  markLoaded();
};
