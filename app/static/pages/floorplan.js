/* The floorplan page: the drawing follows the fields as you type. Each operation form (and the
   text editor) posts its fields to <plan>/preview a moment after the last keystroke; the answer
   is the drawing of the changed plan, shown in place of the saved one until the form is sent
   (which saves a new version) or closed. Choosing a room fills its current values in. */
(function () {
  "use strict";
  var figure = document.querySelector("[data-plan-drawing]");
  var status = document.querySelector("[data-preview-status]");
  if (!figure || !status) { return; }
  var saved = figure.innerHTML;
  var latest = 0;

  function say(text, bad) {
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
  }

  function restore() {
    latest++;
    figure.innerHTML = saved;
    figure.classList.remove("previewing");
    say("");
  }

  function preview(form) {
    if (!form.checkValidity()) {
      say("Fill in the fields to see the change in the drawing.");
      return;
    }
    var mine = ++latest;
    var body = new FormData(form);
    body.set("operation", form.getAttribute("data-action"));
    fetch(form.getAttribute("data-preview"), {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"Accept": "application/json"}
    }).then(function (response) {
      return response.json().then(function (data) { return {status: response.status, data: data}; });
    }).then(function (answer) {
      if (mine !== latest) { return; }
      var data = answer.data || {};
      if (answer.status !== 200) {
        var error = data.error || {};
        var first = (error.errors && error.errors[0] && error.errors[0].message) || error.message;
        say("Not possible as typed: " + (first || "the server refused the change"), true);
        return;
      }
      if (data.svg) {
        figure.innerHTML = data.svg;  // drawn by the app's renderer, user text escaped
        figure.classList.add("previewing");
      }
      if (data.errors && data.errors.length) {
        var e = data.errors[0];
        say("Preview has " + data.errors.length + " error(s)" +
            (e.line ? " (line " + e.line + ")" : "") + ": " + e.message, true);
      } else {
        say("Preview, not saved yet: " + data.change + ". " + data.rooms + " room(s).");
      }
    }, function () {
      if (mine === latest) { say("The preview is not available right now.", true); }
    });
  }

  function fill(select) {
    var option = select.options[select.selectedIndex];
    var form = select.form;
    if (!option || !form || select.name !== "target") { return; }
    var map = {x: "x", y: "y", width: "width", height: "height", label: "label"};
    Object.keys(map).forEach(function (key) {
      var field = form.querySelector("[name=" + key + "]");
      if (field && option.hasAttribute("data-" + map[key])) {
        field.value = option.getAttribute("data-" + map[key]);
      }
    });
    form.querySelectorAll("[data-wall]").forEach(function (wall) {
      wall.value = option.getAttribute("data-" + wall.getAttribute("data-wall")) || "";
    });
  }

  function picksTarget(target) {
    return target.matches && target.matches("[data-room-select][name=target]");
  }

  function typedIn(form) {  // a field changed from its page value, the room choice aside
    return Array.prototype.some.call(form.elements, function (field) {
      if (field.type === "hidden" || field.type === "submit" || picksTarget(field)) {
        return false;
      }
      if (field.options && !field.multiple) {
        var first = 0;  // what the page selects: the last option marked so, else the first
        Array.prototype.forEach.call(field.options, function (o, i) {
          if (o.defaultSelected) { first = i; }
        });
        return field.selectedIndex !== first;
      }
      if (field.options) {
        return Array.prototype.some.call(field.options, function (o) {
          return o.selected !== o.defaultSelected;
        });
      }
      if (field.type === "checkbox" || field.type === "radio") {
        return field.checked !== field.defaultChecked;
      }
      return "defaultValue" in field && field.value !== field.defaultValue;
    });
  }

  document.querySelectorAll("form[data-preview]").forEach(function (form) {
    var timer = null;
    function later() {
      clearTimeout(timer);
      timer = setTimeout(function () { preview(form); }, 250);
    }
    form.addEventListener("input", function (event) {
      if (!picksTarget(event.target)) { later(); }
    });
    form.addEventListener("change", function (event) {
      if (picksTarget(event.target)) {
        fill(event.target);
        restore();
        return;
      }
      later();
    });
    var details = form.closest("details");
    if (details) {
      details.addEventListener("toggle", function () { if (!details.open) { restore(); } });
    }
    // This script is deferred: what was typed before it ran (or put back by the browser on a
    // return to the page) fired no event it heard. Draw that, and leave it as typed; a room
    // chosen with nothing typed gets its values filled in, as a choice made later would.
    if (typedIn(form)) { later(); } else {
      form.querySelectorAll("[data-room-select][name=target]").forEach(fill);
    }
  });
})();
