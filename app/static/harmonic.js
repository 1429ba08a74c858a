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
    if (copy) { event.preventDefault(); copyFrom(copy); }
  });

  // Copy buttons: data-copy names the field or element to copy ("#id" or a bare id). Says so
  // in the nearest role=status region (else on the button). The clipboard API needs a secure
  // context; elsewhere the field is selected and the older copy command tried.
  function say(button, text) {
    var box = button.closest("section, form, div");
    var status = box && (box.querySelector("[role=status]") ||
                         (box.parentElement && box.parentElement.querySelector("[role=status]")));
    if (status && !status.contains(button)) { status.textContent = text; }
    else { button.textContent = text.indexOf("Copied") === 0 ? "Copied" : "Select and copy"; }
  }

  function copyFrom(button) {
    var target = button.dataset.copy;
    var field = target.charAt(0) === "#" ? document.querySelector(target)
                                          : document.getElementById(target);
    if (!field) { return; }
    var value = field.value !== undefined ? field.value : field.textContent.trim();
    function fallback() {
      if (field.select) { field.focus(); field.select(); }
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      say(button, ok ? "Copied to the clipboard." : "Selected: press Ctrl+C (⌘C) to copy.");
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(function () {
        say(button, "Copied to the clipboard.");
      }, fallback);
    } else {
      fallback();
    }
  }

  // A form the page draws itself, refused and shown again, carries what was typed in
  // data-refused: put each value back in its field.
  function restore(form) {
    var values;
    try { values = JSON.parse(form.dataset.refused); } catch (e) { return; }
    Object.keys(values).forEach(function (name) {
      Array.prototype.forEach.call(form.elements, function (field) {
        if (field.name !== name || field.type === "hidden") { return; }
        if (field.type === "checkbox") { field.checked = ["true", "on", "1"].indexOf(values[name]) >= 0; }
        else { field.value = values[name]; }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-refused]").forEach(restore);
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  });
})();
