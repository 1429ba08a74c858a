/* A decision's ballots and the new-decision form, made easier with JavaScript; every form
   still works without it (the server checks and explains everything said here).
   - dots: a live "dots left" count, and the browser refuses more dots than there are;
   - a proposal's reason is required as soon as "Block" is chosen;
   - "none of the above" clears and sets aside the other choices;
   - a ranking: move a place up or down, and an option chosen twice swaps places;
   - a new decision shows only the chosen kind's settings (the others are disabled, so they
     are not sent), and a time typed without a length gets an hour. */
(function () {
  "use strict";

  function each(selector, root, fn) {
    Array.prototype.forEach.call((root || document).querySelectorAll(selector), fn);
  }

  // Dots left.
  each("[data-dots-total]", null, function (box) {
    var total = parseInt(box.getAttribute("data-dots-total"), 10);
    var form = box.closest("form");
    var left = form.querySelector("[data-dots-left]");
    var line = left && left.parentNode;
    function count() {
      var placed = 0;
      each("input[data-dots]", box, function (input) {
        var n = parseInt(input.value, 10);
        placed += isNaN(n) || n < 0 ? 0 : n;
      });
      var remaining = total - placed;
      left.textContent = remaining < 0 ? "0" : String(remaining);
      line.classList.toggle("over", remaining < 0);
      var message = remaining < 0 ? "That is " + (-remaining) + " more than your " + total +
        " dots: take some off." : "";
      each("input[data-dots]", box, function (input) { input.setCustomValidity(message); });
      if (remaining < 0) {
        left.parentNode.lastChild.textContent = " of " + total + " dots left — " + (-remaining) +
          " too many";
      } else {
        left.parentNode.lastChild.textContent = " of " + total + " dots left";
      }
    }
    box.addEventListener("input", count);
    count();
  });

  // A reason required for one stance (a block).
  each("textarea[data-required-when]", null, function (reason) {
    var form = reason.closest("form");
    var when = reason.getAttribute("data-required-when");
    function update() {
      var chosen = form.querySelector("input[name=stance]:checked");
      reason.required = !!chosen && chosen.value === when;
    }
    form.addEventListener("change", update);
    update();
  });

  // "None of the above" as a radio beside the options (a poll): one or the other.
  each("input[data-exclusive]", null, function (nota) {
    var form = nota.closest("form");
    var others = form.querySelectorAll("input[name=" + nota.getAttribute("data-exclusive") + "]");
    nota.addEventListener("change", function () {
      if (nota.checked) { Array.prototype.forEach.call(others, function (o) { o.checked = false; }); }
    });
    Array.prototype.forEach.call(others, function (o) {
      o.addEventListener("change", function () { if (o.checked) { nota.checked = false; } });
    });
  });

  // "None of the above" as a checkbox instead of scores, dots or a ranking.
  each("input[data-instead-of]", null, function (nota) {
    var form = nota.closest("form");
    var prefix = nota.getAttribute("data-instead-of") + "[";
    function update() {
      each("input, select", form, function (field) {
        if (field.name && field.name.indexOf(prefix) === 0) { field.disabled = nota.checked; }
      });
    }
    nota.addEventListener("change", update);
    update();
  });

  // A ranking: move up / down, and no option in two places (choosing one already placed
  // elsewhere swaps the two places).
  each("[data-ranking]", null, function (list) {
    var selects = Array.prototype.slice.call(list.querySelectorAll("select"));
    function remember() { selects.forEach(function (s) { s.setAttribute("data-was", s.value); }); }
    function swap(a, b) {
      var value = a.value;
      a.value = b.value;
      b.value = value;
      remember();
    }
    each("[data-move]", list, function (move) { move.hidden = false; });
    selects.forEach(function (select, i) {
      select.addEventListener("change", function () {
        var was = select.getAttribute("data-was") || "";
        selects.forEach(function (other) {
          if (other !== select && select.value && other.value === select.value) {
            other.value = was;
          }
        });
        remember();
      });
      var row = select.closest("li");
      var up = row.querySelector("[data-move-up]");
      var down = row.querySelector("[data-move-down]");
      if (up) { up.addEventListener("click", function () { if (i > 0) { swap(select, selects[i - 1]); } }); }
      if (down) { down.addEventListener("click", function () { if (i < selects.length - 1) { swap(select, selects[i + 1]); } }); }
    });
    remember();
  });

  // A new decision: only the chosen kind's settings.
  each("form[data-action=create_decision]", null, function (form) {
    function update() {
      var chosen = form.querySelector("input[name=kind]:checked");
      var kind = chosen ? chosen.value : "acceptance";
      each("[data-kinds]", form, function (group) {
        var on = group.getAttribute("data-kinds").split(" ").indexOf(kind) >= 0;
        group.hidden = !on;
        if (group.tagName === "FIELDSET") { group.disabled = !on; }
        each("input, select, textarea", group, function (field) {
          if (group.tagName !== "FIELDSET") { field.disabled = !on; }
        });
      });
    }
    form.addEventListener("change", function (event) {
      if (event.target.name === "kind") { update(); }
    });
    update();
    // A time typed without a length lasts an hour.
    form.addEventListener("change", function (event) {
      var match = /^slots\[(\d+)\]\[starts_at\]$/.exec(event.target.name || "");
      if (!match || !event.target.value) { return; }
      var minutes = form.querySelector("[name='slots[" + match[1] + "][minutes]']");
      if (minutes && !minutes.value) { minutes.value = "60"; }
    });
  });
})();
