/* A run page follows its run: every second while the run is queued or running, the page's
   live part is fetched again (GET <run>/live) and swapped in; the role=status note says when
   the status changes, and polling stops once the run has finished. */
(function () {
  "use strict";
  var holder = document.querySelector("[data-live-url]");
  var note = document.querySelector("[data-live-note]");
  if (!holder) { return; }
  var url = holder.getAttribute("data-live-url");
  var live = holder.querySelector("[data-run-live]");
  var last = live ? live.getAttribute("data-status") : "";
  var failures = 0;
  function done(status) { return status !== "queued" && status !== "running"; }
  function tick() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (response) {
        if (!response.ok) { return Promise.reject(response.status); }
        var status = response.headers.get("X-Run-Status") || "";
        return response.text().then(function (html) { return {status: status, html: html}; });
      })
      .then(function (answer) {
        failures = 0;
        holder.innerHTML = answer.html;
        if (answer.status !== last && note) {
          // In the page's own words ("finished", not "succeeded").
          var said = holder.querySelector(".run-status strong");
          note.textContent = "Status: " + (said ? said.textContent : answer.status) + ".";
        }
        last = answer.status;
        if (!done(answer.status)) { setTimeout(tick, 1000); }
      }, function () {
        failures += 1;
        if (failures < 5) { setTimeout(tick, 2000 * failures); }
        else if (note) { note.textContent = "Lost touch with the run: reload the page to see where it is."; }
      });
  }
  if (!done(last)) { setTimeout(tick, 1000); }
})();
