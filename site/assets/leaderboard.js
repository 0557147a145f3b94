/* mtboard: click-to-sort for plain `table.mtb-lb` tables such as the runs index (boards: board.js; compare: pages.js).
 * Vanilla JS, no CDN, no innerHTML: every value is written with textContent, so data from run cards stays text.
 * All numbers, ranks and clusters are computed in Python at build time; this script only shows and orders them.
 */
(function () {
  "use strict";

  function sortValue(td, numeric) {
    var v = td ? td.getAttribute("data-v") : "";
    if (v === null || v === "" || v === "None") return null;
    if (numeric) { var f = parseFloat(v); return isNaN(f) ? null : f; }
    return v.toLowerCase();
  }

  function sortTable(table, colIndex, numeric, dir) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.forEach(function (r, i) { r._mtbPos = i; });
    rows.sort(function (a, b) {
      var x = sortValue(a.cells[colIndex], numeric), y = sortValue(b.cells[colIndex], numeric);
      if (x === null && y === null) return a._mtbPos - b._mtbPos;
      if (x === null) return 1;            // missing values last in both directions
      if (y === null) return -1;
      if (x < y) return dir === "ascending" ? -1 : 1;
      if (x > y) return dir === "ascending" ? 1 : -1;
      return a._mtbPos - b._mtbPos;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === colIndex) th.setAttribute("aria-sort", dir); else th.removeAttribute("aria-sort");
    });
  }

  function initSort(table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var numeric = th.hasAttribute("data-numeric");
        var cur = th.getAttribute("aria-sort");
        var key = th.getAttribute("data-key");
        // first click: best first (descending for numbers, except rank/cost/speed/MQM where lower is better)
        var lowerBetter = ["rank", "cost", "speed", "mqm"].indexOf(key) >= 0;
        var dir = cur ? (cur === "ascending" ? "descending" : "ascending")
                      : (numeric && !lowerBetter ? "descending" : "ascending");
        sortTable(table, i, numeric, dir);
      });
    });
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("table.mtb-lb"), initSort);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
