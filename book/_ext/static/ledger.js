// The claims ledger: sorting and filtering of the table of every claim with
// simple-datatables. Every row stays in the page (no paging), so that a link to a row
// (#ledger-<id>) always finds it; the table scrolls inside a box with its header in view.
// After each redraw the math of the table is typeset again.
(function () {
  "use strict";

  function typeset(node) {
    if (window.MathJax && window.MathJax.typesetPromise) {
      window.MathJax.typesetPromise([node]).catch(function () {});
    }
  }

  function showTarget() {
    var hash = decodeURIComponent(window.location.hash.slice(1));
    var el = hash.indexOf("ledger-") === 0 ? document.getElementById(hash) : null;
    if (!el) {
      return;
    }
    document.querySelectorAll("tr.ledger-target").forEach(function (tr) {
      tr.classList.remove("ledger-target");
    });
    el.closest("tr").classList.add("ledger-target");
    el.scrollIntoView({ block: "center" });
  }

  function init() {
    var table = document.querySelector("table.ledger-table");
    if (!table || !window.simpleDatatables) {
      return; // without the library the page keeps its plain, complete table
    }
    var dt = new window.simpleDatatables.DataTable(table, {
      searchable: true,
      sortable: true,
      paging: false,
      labels: {
        placeholder: "Filter: an id, a verdict, a paper, any words",
        noRows: "No claim matches",
        noResults: "No claim matches",
        info: "{rows} claims",
      },
    });
    var box = table.closest(".datatable-wrapper") || table.parentNode;
    ["datatable.sort", "datatable.search", "datatable.update"].forEach(function (name) {
      dt.on(name, function () {
        typeset(box);
        showTarget();
      });
    });
    window.addEventListener("hashchange", showTarget);
    typeset(box);
    showTarget();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
