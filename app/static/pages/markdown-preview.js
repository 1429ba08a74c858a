/* Live Markdown preview: a pause in typing (300 ms) sends the text to the app's preview
   endpoint, which renders it with the same sanitizing renderer as the saved page. Only the
   latest answer is shown; the form works the same without JavaScript. */
(function () {
  "use strict";
  document.querySelectorAll("[data-md-editor]").forEach(function (editor) {
    var area = editor.querySelector("textarea");
    var box = editor.querySelector("[data-preview-box]");
    var out = editor.querySelector("[data-preview]");
    var form = editor.closest("form");
    var token = form && form.querySelector("input[name=csrf_token]");
    if (!area || !box || !out) { return; }
    box.hidden = false;
    editor.classList.add("with-preview");
    var timer = null;
    var sent = 0;
    function render() {
      var mine = ++sent;
      var body = new URLSearchParams();
      body.set("text", area.value);
      if (token) { body.set("csrf_token", token.value); }
      out.setAttribute("aria-busy", "true");
      fetch(editor.getAttribute("data-preview-url"), {
        method: "POST", body: body, credentials: "same-origin",
        headers: {"Accept": "text/html"}
      }).then(function (response) {
        return response.ok ? response.text() : Promise.reject(response.status);
      }).then(function (html) {
        if (mine === sent) { out.innerHTML = html; }  // sanitized by the server (nh3)
      }, function () {
        if (mine === sent) { out.textContent = "The preview is not available right now."; }
      }).then(function () {
        if (mine === sent) { out.removeAttribute("aria-busy"); }
      });
    }
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(render, 300);
    });
    // Text typed before this script ran (it is deferred), or put back by the browser on a
    // return to the page, fired no input event we heard: the server rendered the page's own
    // text, so render again when the box holds something else.
    if (area.value !== area.defaultValue) { render(); }
  });
})();
