// wiki-memory viewer: the little behaviour the pages need. Everything works without it.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // The project switcher goes as soon as a project is picked.
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }

  // Actions that undo work ask first (a revert makes a commit).
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  // "/" jumps to the search box, as on most sites.
  const search = document.getElementById("quick-search");
  document.addEventListener("keydown", (event) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (event.key === "/" && !typing && search) {
      event.preventDefault();
      search.focus();
      search.select();
    }
  });

  // The edit form: Ctrl+S (Cmd+S) saves; leaving with unsaved text asks first.
  for (const form of document.querySelectorAll("form[data-guard]")) {
    const area = form.querySelector("textarea");
    const original = area.value;
    let submitting = false;
    form.addEventListener("submit", () => { submitting = true; });
    window.addEventListener("beforeunload", (event) => {
      if (!submitting && area.value !== original) event.preventDefault();
    });
    area.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        submitting = true;
        form.requestSubmit();
      }
    });
  }
});
