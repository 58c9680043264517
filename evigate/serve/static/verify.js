// evigate Trace Workbench, verify page: an answer and passages, each sentence's label and span.
"use strict";

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
  markLoaded();
}

PAGES.verify = initVerify;
