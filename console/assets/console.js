// exgate console: the copy buttons of a secret shown once, and the
// confirmation of a form that asks for one (data-confirm: cancelling an
// order). No framework, no inline script (the Content-Security-Policy
// allows only this file).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var src = document.getElementById(btn.dataset.copy);
      var note = document.getElementById(btn.dataset.copy + "-copied");
      if (!src) return;
      var text = src.textContent;
      var done = function (msg) { if (note) note.textContent = msg; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done("Copied."); }, function () { select(src); done("Selected: press Ctrl+C."); });
      } else {
        select(src);
        done("Selected: press Ctrl+C.");
      }
    });
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.dataset.confirm)) e.preventDefault();
    });
  });
  function select(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
});
