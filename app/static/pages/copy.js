/* Copy buttons: [data-copy="#field"] copies that field's value and says so in the nearest
   role=status region. The clipboard API needs a secure context; a selected field and the
   older copy command serve elsewhere. */
(function () {
  "use strict";
  function say(button, text) {
    var box = button.closest("section, form, div");
    var status = box && (box.querySelector("[role=status]") ||
                         (box.parentElement && box.parentElement.querySelector("[role=status]")));
    if (status) { status.textContent = text; }
  }
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.querySelector(button.getAttribute("data-copy"));
      if (!field) { return; }
      var value = field.value !== undefined ? field.value : field.textContent;
      function fallback() {
        field.focus();
        if (field.select) { field.select(); }
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
    });
  });
})();
