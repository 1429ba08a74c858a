// Harmonic's small shared script (no framework): date-time shortcuts, copy buttons, focus on a
// refused form's error summary, a confirmation before what cannot be undone, the studio bar's
// current section in view. Every page works without it (a form then goes without asking).
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

  // Forms (or submit buttons) with data-confirm ask first, in a modal dialog whose safe choice (Cancel) has the
  // focus; going ahead sends the form as it would have gone (same submit button).
  function dialog() {
    var found = document.getElementById("confirm-dialog");
    if (found) { return found; }
    found = document.createElement("dialog");
    found.id = "confirm-dialog";
    found.className = "confirm";
    found.setAttribute("aria-labelledby", "confirm-title");
    found.setAttribute("aria-describedby", "confirm-text");
    found.innerHTML = '<form method="dialog"><h2 id="confirm-title">Please confirm</h2>' +
      '<p id="confirm-text"></p><div class="row">' +
      '<button value="go" class="danger" data-confirm-go></button>' +
      '<button value="cancel" class="secondary" data-confirm-cancel>Cancel</button></div></form>';
    document.body.appendChild(found);
    return found;
  }

  function ask(form, submitter, asking) {
    var box = dialog();
    box.querySelector("#confirm-text").textContent = asking.dataset.confirm;
    box.querySelector("[data-confirm-go]").textContent = asking.dataset.confirmButton || "Yes, go ahead";
    box.returnValue = "";
    box.onclose = function () {
      if (box.returnValue !== "go") { return; }
      form.dataset.confirmed = "yes";
      try { form.requestSubmit(submitter && submitter.form === form ? submitter : undefined); }
      finally { delete form.dataset.confirmed; }
    };
    box.showModal();
    box.querySelector("[data-confirm-cancel]").focus();
  }

  // A form rendered once is accepted once: the server keeps a receipt of each form's one-time
  // key. A browser that draws the page again on Back (instead of showing it as it was) would
  // give the form a new key; the key it sent from this page is kept for the tab and put back,
  // so sending it again shows what the first submit made instead of making it twice.
  var SENT = "harmonic.sent:";

  function sentSlot(form) {
    return SENT + window.location.pathname + "|" + form.getAttribute("action");
  }

  document.addEventListener("submit", function (event) {
    var key = event.target.querySelector && event.target.querySelector("input[name=form_key]");
    if (!key || event.defaultPrevented) { return; }
    try { window.sessionStorage.setItem(sentSlot(event.target), key.value); } catch (e) { /* private mode */ }
  });

  function keepSentKeys() {
    var visit = window.performance && performance.getEntriesByType &&
      performance.getEntriesByType("navigation")[0];
    if (!visit || visit.type !== "back_forward") { return; }
    document.querySelectorAll("form input[name=form_key]").forEach(function (key) {
      var sent = null;
      try { sent = window.sessionStorage.getItem(sentSlot(key.form)); } catch (e) { sent = null; }
      if (sent) { key.value = sent; }
    });
  }

  // The question is the submit button's own (data-confirm on a button), else the form's.
  document.addEventListener("submit", function (event) {
    var form = event.target, submitter = event.submitter;
    var asking = submitter && submitter.dataset && submitter.dataset.confirm ? submitter
      : (form.dataset && form.dataset.confirm ? form : null);
    if (!asking || form.dataset.confirmed === "yes" || typeof HTMLDialogElement !== "function") {
      return;
    }
    event.preventDefault();
    ask(form, submitter, asking);
  }, true);

  // A handle suggested from a name (data-slug-from: the name field's id) until the person
  // types one of their own, and checked as it changes (data-check-url answers
  // {"ok", "message"}; the message goes to the status line named data-check-status-for).
  function slug(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "");
  }

  function checker(input) {
    var status = document.querySelector('[data-check-status-for="' + input.id + '"]');
    var timer = null, asked = "";
    return function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var value = input.value.trim();
        if (!status || value === asked) { return; }
        asked = value;
        if (!value) { status.textContent = ""; return; }
        fetch(input.dataset.checkUrl + "?handle=" + encodeURIComponent(value),
              { headers: { Accept: "application/json" }, credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.json() : null; })
          .then(function (answer) {
            if (!answer || input.value.trim() !== value) { return; }
            status.textContent = answer.ok ? "✓ " + answer.message
              : "✗ " + answer.message.charAt(0).toUpperCase() + answer.message.slice(1) + ".";
            status.classList.toggle("bad", !answer.ok);
            input.setAttribute("aria-invalid", answer.ok ? "false" : "true");
          }, function () { status.textContent = ""; });
      }, 250);
    };
  }

  function wireHandles() {
    document.querySelectorAll("input[data-slug-from]").forEach(function (handle) {
      var source = document.getElementById(handle.dataset.slugFrom);
      var check = handle.dataset.checkUrl ? checker(handle) : function () {};
      var own = handle.value !== "";  // typed before (a refused form): the person's own
      handle.addEventListener("input", function () { own = handle.value !== ""; check(); });
      if (source) {
        source.addEventListener("input", function () {
          if (own) { return; }
          handle.value = slug(source.value);
          check();
        });
      }
      if (handle.value) { check(); }
    });
  }

  // A new studio's time zone: the browser's own, unless the person already picked one.
  function browserZone() {
    var zone;
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
    document.querySelectorAll("select[data-browser-zone]").forEach(function (select) {
      // A form shown again (refused, or kept over a sign-in) keeps what was chosen.
      if (document.getElementById("error-summary") || !zone) { return; }
      var known = Array.prototype.some.call(select.options, function (o) { return o.value === zone; });
      var preset = select.querySelector("option[selected]");
      if (known && (!preset || select.value === preset.value)) {
        select.value = zone;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    keepSentKeys();
    wireHandles();
    browserZone();
    document.querySelectorAll("form[data-refused]").forEach(restore);
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
    // Signed in again with a kept form: the address is the form's page, not the sign-in's.
    var resumed = document.body.dataset.resumedPath;
    if (resumed && window.history.replaceState) { window.history.replaceState(null, "", resumed); }
    // The studio bar scrolls on a phone: the current section is in view, not cut off.
    var here = document.querySelector("nav.studio li [aria-current=page]");
    var bar = here && here.closest(".inner");
    if (bar && bar.scrollWidth > bar.clientWidth) {
      bar.scrollLeft += here.getBoundingClientRect().left - bar.getBoundingClientRect().left -
        (bar.clientWidth - here.offsetWidth) / 2;
    }
  });
})();
