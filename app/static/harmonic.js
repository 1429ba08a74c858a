// Harmonic's small shared script (no framework): date-time shortcuts, copy buttons, and
// focus on a refused form's error summary. Every page works without it.
(function () {
  "use strict";

  // A datetime-local value ("2026-12-01T09:00") for `date` as seen in the IANA `zone`.
  function localValue(date, zone) {
    var parts = {};
    new Intl.DateTimeFormat("en-CA", {
      timeZone: zone || undefined, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23"
    }).formatToParts(date).forEach(function (p) { parts[p.type] = p.value; });
    return parts.year + "-" + parts.month + "-" + parts.day + "T" + parts.hour + ":" + parts.minute;
  }

  function shortcut(button) {
    var input = document.getElementById(button.dataset.for);
    if (!input) return;
    var offset = button.dataset.offset, now = new Date(), value = "";
    if (offset === "tomorrow") {
      value = localValue(new Date(now.getTime() + 86400000), input.dataset.zone).slice(0, 10) + "T09:00";
    } else if (offset) {
      var n = parseInt(offset, 10), unit = offset.slice(-1);
      var ms = { h: 3600000, d: 86400000 }[unit] * n;
      value = localValue(new Date(now.getTime() + ms), input.dataset.zone);
    }
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-offset]");
    if (button) { event.preventDefault(); shortcut(button); return; }
    var copy = event.target.closest("button[data-copy]");
    if (copy && navigator.clipboard) {
      var source = document.getElementById(copy.dataset.copy);
      navigator.clipboard.writeText(source ? source.textContent.trim() : "").then(function () {
        copy.textContent = "Copied";
      });
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  });
})();
