/* Repeatable fields (a new decision's options): "Add another option" copies the last row with
   the next index. Without JavaScript the form still offers its first rows. */
(function () {
  "use strict";
  document.querySelectorAll("[data-repeat]").forEach(function (box) {
    var list = box.querySelector("[data-repeat-list]");
    var add = box.querySelector("[data-repeat-add]");
    if (!list || !add) { return; }
    add.hidden = false;
    add.addEventListener("click", function () {
      var rows = list.querySelectorAll("[data-repeat-item]");
      var last = rows[rows.length - 1];
      var index = rows.length;
      var row = last.cloneNode(true);
      var input = row.querySelector("input");
      var label = row.querySelector("label");
      var name = box.getAttribute("data-repeat");
      input.id = name + "-" + index;
      input.name = name + "[" + index + "]";
      input.value = "";
      label.htmlFor = input.id;
      label.lastChild.textContent = (index + 1) + ".";
      list.appendChild(row);
      input.focus();
    });
  });
})();
