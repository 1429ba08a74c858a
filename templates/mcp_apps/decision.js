// The decision view: the options with their counts and the caller's own votes; a vote is cast
// in place by asking the host to call execute_action vote on the decision's page, then the
// view reads the decision again (show_decision). Option titles are set as text.
"use strict";

const decision = { path: null, data: null };

function show(result) {
  const data = result.structuredContent;
  if (!data || !Array.isArray(data.options)) {
    const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text);
    say(text.join("\n") || "No decision to show.", "error");
    return;
  }
  decision.path = data.path;
  decision.data = data;
  document.getElementById("question").textContent = data.question;
  document.getElementById("state").textContent = data.closed ? "Closed" : "Open";
  const editable = data.canVote && !data.closed && Bridge.canCallTools();
  const body = document.getElementById("options");
  body.replaceChildren(...data.options.map((option, index) => {
    const accept = el("input", { type: "checkbox", name: "accept", "aria-label": "Accept",
                                 checked: option.mine.accept, disabled: !editable });
    const prefer = el("input", { type: "checkbox", name: "prefer", "aria-label": "Prefer",
                                 checked: option.mine.prefer, disabled: !editable });
    const row = el("tr", { class: "option" },
                   el("td", { class: "title" }, option.title), el("td", {}, accept),
                   el("td", {}, prefer), el("td", { class: "count accepted" }, option.accepted),
                   el("td", { class: "count preferred" }, option.preferred));
    row.dataset.index = String(index);
    return row;
  }));
  if (!data.options.length) {
    body.append(el("tr", {}, el("td", { colspan: 5 }, "No options yet.")));
  }
  document.getElementById("vote").hidden = !editable || !data.options.length;
  say(data.closed ? "This decision is closed." : data.canVote
    ? "Tick accept and prefer, then Vote." : "You cannot vote on this decision.");
}

// A button, not a form submission: hosts may sandbox the frame without allow-forms.
document.getElementById("vote").addEventListener("click", async () => {
  if (!decision.data) return;
  const votes = [...document.querySelectorAll("tr.option")].map((row) => ({
    option_title: decision.data.options[Number(row.dataset.index)].title,
    accept: row.querySelector("input[name=accept]").checked,
    prefer: row.querySelector("input[name=prefer]").checked,
  }));
  say("Voting…");
  try {
    const done = await Bridge.callTool("execute_action",
                                       { path: decision.path, action: "vote", params: { votes } });
    show(await Bridge.callTool("show_decision", { path: decision.path }));
    say((done.structuredContent || {}).message || "Voted.");
  } catch (error) {
    say(error.message, "error");
  }
});

Bridge.on("ui/notifications/tool-result", show);
Bridge.on("ui/notifications/tool-cancelled", () => say("The call was cancelled.", "error"));
Bridge.connect("harmonic-decision-view").catch((error) => say(error.message, "error"));
