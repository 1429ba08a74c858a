// The recipe editor on a playbook's page: fields for the values a recipe asks for, its caps and
// its steps' bounds, kept in step with the recipe's text (the update_recipe action's one
// parameter, which the form sends). Without this script the text is there to edit by hand.
(function () {
  "use strict";

  function parts(path) {
    return path.split(".").map(function (p) { return /^\d+$/.test(p) ? parseInt(p, 10) : p; });
  }

  function read(data, path) {
    return parts(path).reduce(function (node, key) {
      return node !== null && node !== undefined && typeof node === "object" ? node[key] : undefined;
    }, data);
  }

  function write(data, path, value) {
    var keys = parts(path), node = data;
    for (var i = 0; i < keys.length - 1; i++) {
      if (node[keys[i]] === null || typeof node[keys[i]] !== "object") {
        if (value === undefined) { return; }
        node[keys[i]] = typeof keys[i + 1] === "number" ? [] : {};
      }
      node = node[keys[i]];
    }
    var last = keys[keys.length - 1];
    if (value === undefined) { delete node[last]; } else { node[last] = value; }
  }

  // A field's text as the recipe holds it, or undefined to leave the key out; throws when the
  // text cannot be what the field takes.
  function typed(field) {
    var text = field.value.trim(), kind = field.dataset.type, isVar = field.dataset.path.indexOf("vars.") === 0;
    if (text === "") { return isVar ? null : undefined; }
    if (kind === "number" || kind === "integer") {
      var n = Number(text);
      if (!isFinite(n) || (kind === "integer" && !Number.isInteger(n))) { throw new Error("a number"); }
      return n;
    }
    if (kind === "boolean") {
      if (text !== "true" && text !== "false") { throw new Error("true or false"); }
      return text === "true";
    }
    if (kind === "object" || kind === "array") { return JSON.parse(text); }
    return text;
  }

  function shown(value) {
    if (value === null || value === undefined) { return ""; }
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }

  function wire(form) {
    var text = form.querySelector("[data-recipe-json]");
    var box = form.querySelector("[data-recipe-fields]");
    var status = form.querySelector("[data-recipe-status]");
    if (!text || !box) { return; }
    var fields = Array.prototype.slice.call(box.querySelectorAll("[data-path]"));
    box.hidden = false;

    function say(message, bad) {
      if (status) { status.textContent = message; status.classList.toggle("bad", !!bad); }
    }

    function parsed() {
      try { return JSON.parse(text.value); } catch (e) { return null; }
    }

    fields.forEach(function (field) {
      field.addEventListener("input", function () {
        var data = parsed();
        if (data === null) { say("The recipe's text is not valid JSON: correct it below first.", true); return; }
        var value;
        try { value = typed(field); } catch (e) {
          field.setAttribute("aria-invalid", "true");
          say(field.labels[0].textContent + " takes " + e.message + ".", true);
          return;
        }
        field.removeAttribute("aria-invalid");
        write(data, field.dataset.path, value);
        text.value = JSON.stringify(data, null, 2);
        say("");
      });
    });

    text.addEventListener("input", function () {
      var data = parsed();
      fields.forEach(function (field) { field.disabled = data === null; });
      if (data === null) { say("The text is not valid JSON yet: the fields wait until it is.", true); return; }
      say("");
      fields.forEach(function (field) {
        if (document.activeElement !== field) { field.value = shown(read(data, field.dataset.path)); }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.recipe-editor").forEach(wire);
  });
})();
