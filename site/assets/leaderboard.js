/* mtboard leaderboard: client-side column sort and domain filter (compare: pages.js).
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

  function columnIndex(table) {
    var idx = {};
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) { idx[th.getAttribute("data-key")] = i; });
    return idx;
  }

  function applyDomain(table, views, domain, info, link) {
    var view = views[domain] || views[""];
    var idx = columnIndex(table);
    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
      var data = view.rows[tr.getAttribute("data-row")];
      tr.hidden = !data;
      if (!data) return;
      Object.keys(data).forEach(function (key) {
        var td = tr.cells[idx[key]];
        if (!td) return;
        td.textContent = data[key][0];
        td.setAttribute("data-v", data[key][1] === null ? "" : String(data[key][1]));
      });
    });
    if (info) info.textContent = view.info;
    if (link) { if (view.href) { link.href = view.href; link.hidden = false; } else { link.hidden = true; } }
    sortTable(table, idx.rank, true, "ascending");
  }

  function initDomainFilter(select) {
    var table = document.getElementById(select.getAttribute("data-table"));
    if (!table || !table.hasAttribute("data-views")) return;
    var views = JSON.parse(table.getAttribute("data-views"));
    var info = document.querySelector(".mtb-viewinfo");
    var link = select.closest(".mtb-controls").querySelector(".mtb-domainlink");
    select.addEventListener("change", function () {
      applyDomain(table, views, select.value, info, link);
      if (history.replaceState) history.replaceState(null, "", select.value ? "#domain=" + select.value : "#");
    });
    var m = /domain=([a-z]+)/.exec(location.hash);
    if (m && views[m[1]]) { select.value = m[1]; }
    applyDomain(table, views, select.value, info, link);
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("table.mtb-lb"), initSort);
    Array.prototype.forEach.call(document.querySelectorAll("select.mtb-domain"), initDomainFilter);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
