/* mtboard boards: WAI-ARIA APG sortable table (button in each header, aria-sort on the sorted column only, polite
 * live region), sort state in ?sort=&dir=, optional columns (CSS picker) persisted in ?cols=; row filters
 * (issue 37 item 2) built from the facts Python wrote (data-filters, data-f-* on each row), state in ?weights=&size=…,
 * a live "showing 3 of 12 rows" count. Without JavaScript the filters stay hidden and every row is shown.
 * Numbers, ranks and clusters are rendered by Python; this only reorders rows. No innerHTML: text only.
 * Initialised through Material's document$ (works with navigation.instant), else on DOMContentLoaded. */
(function () {
  "use strict";

  function val(cell, numeric) {
    var v = cell ? cell.getAttribute("data-v") : "";
    if (v === null || v === "") return null;
    if (numeric) { var f = parseFloat(v); return isNaN(f) ? null : f; }
    return v.toLowerCase();
  }

  function setUrl(params) {
    if (!window.history || !history.replaceState) return;
    var u = new URL(window.location.href);
    Object.keys(params).forEach(function (k) {
      if (params[k] === null || params[k] === "") u.searchParams.delete(k); else u.searchParams.set(k, params[k]);
    });
    history.replaceState(history.state, "", u.toString());
    keepQuery();
  }

  // the pager's links (previous, next, page numbers) and the domain links carry the current query (filters and
  // sort; issue 37 item 2), so moving to another page or domain keeps the state; called on load and on every change
  function keepQuery() {
    var search = window.location.search;
    var links = document.querySelectorAll("nav.mtb-pager a[href], .mtb-domains a[href]");
    Array.prototype.forEach.call(links, function (a) {
      var base = a.getAttribute("data-mtb-href");
      if (base === null) {
        base = a.getAttribute("href");
        a.setAttribute("data-mtb-href", base);
      }
      var hash = "", i = base.indexOf("#");
      if (i >= 0) { hash = base.slice(i); base = base.slice(0, i); }
      var j = base.indexOf("?");
      if (j >= 0) base = base.slice(0, j);
      a.setAttribute("href", base + search + hash);
    });
  }

  function setupTable(table) {
    if (table.getAttribute("data-mtb-init")) return;
    table.setAttribute("data-mtb-init", "1");
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var body = table.tBodies[0];
    Array.prototype.forEach.call(body.rows, function (r, i) { r.setAttribute("data-pos", String(i)); });
    var live = table.closest(".mtb-board").querySelector("[data-live]");

    function sortBy(th, dir, announce) {
      var idx = heads.indexOf(th);
      // the method column compares strings: its data-v is the name's place on the page, zero-padded (boards.py
      // method_places), which orders as the names do
      var numeric = th.hasAttribute("data-lib") && th.getAttribute("data-key") !== "method";
      var rows = Array.prototype.slice.call(body.rows);
      var sign = dir === "ascending" ? 1 : -1;
      rows.sort(function (a, b) {
        var x = val(a.cells[idx], numeric), y = val(b.cells[idx], numeric);
        var pa = +a.getAttribute("data-pos"), pb = +b.getAttribute("data-pos");
        if (x === null && y === null) return pa - pb;
        if (x === null) return 1;              // missing last in both directions
        if (y === null) return -1;
        if (x < y) return -sign;
        if (x > y) return sign;
        return pa - pb;                        // ties keep rank order
      });
      rows.forEach(function (r) { body.appendChild(r); });
      heads.forEach(function (h) { if (h === th) h.setAttribute("aria-sort", dir); else h.removeAttribute("aria-sort"); });
      var lib = th.getAttribute("data-lib");
      var best = lib === null ? "" : ((lib === "1") === (dir === "ascending") ? ", best first" : ", worst first");
      if (live && announce) live.textContent = "Sorted by " + th.querySelector("button").textContent + " " + dir + best;
      if (announce) setUrl({ sort: th.getAttribute("data-key"), dir: dir === "ascending" ? "asc" : "desc" });
    }

    heads.forEach(function (th) {
      var btn = th.querySelector("button");
      if (!btn) return;
      btn.addEventListener("click", function () {
        var cur = th.getAttribute("aria-sort");
        var lib = th.getAttribute("data-lib");
        var dir = cur ? (cur === "ascending" ? "descending" : "ascending") : (lib === "0" ? "descending" : "ascending");
        sortBy(th, dir, true);
      });
    });
    var q = new URLSearchParams(window.location.search);
    var key = q.get("sort");
    if (key) {
      var th = heads.filter(function (h) { return h.getAttribute("data-key") === key; })[0];
      if (th) sortBy(th, q.get("dir") === "desc" ? "descending" : "ascending", false);
    }
  }

  function setupColumns(board) {
    var boxes = Array.prototype.slice.call(board.querySelectorAll("input[data-col]"));
    if (!boxes.length) return;
    var q = new URLSearchParams(window.location.search);
    var want = (q.get("cols") || "").split(",");
    boxes.forEach(function (b) {
      if (want.indexOf(b.getAttribute("data-col")) >= 0) b.checked = true;
      b.addEventListener("change", function () {
        var on = boxes.filter(function (x) { return x.checked; }).map(function (x) { return x.getAttribute("data-col"); });
        setUrl({ cols: on.join(",") });
      });
    });
  }

  // "Cost of N segments" (issue 36 item 5): Python writes every figure for its default N; the visitor's N
  // recomputes them here with the same rule as mtboard.core.fmt.usd, and ?segments= keeps it.
  function usd(x) {
    if (!isFinite(x) || x < 0) return "\u2014";
    if (x === 0) return "$0";
    if (x >= 0.01) return "$" + x.toFixed(3);
    var s = x.toFixed(6);
    return parseFloat(s) === 0 ? "< $0.000001" : "$" + s.replace(/0+$/, "");
  }

  function setupCostN() {
    var inputs = Array.prototype.slice.call(document.querySelectorAll("input.mtb-costn-input"));
    if (!inputs.length || inputs[0].getAttribute("data-mtb-init")) return;
    function apply(n, announce) {
      inputs.forEach(function (i) { if (String(i.value) !== String(n)) i.value = n; });
      Array.prototype.forEach.call(document.querySelectorAll(".mtb-costn"), function (el) {
        var per = parseFloat(el.getAttribute("data-usd"));
        el.firstChild.textContent = usd(per * n) + " for ";
        el.querySelector(".mtb-costn-n").textContent = n.toLocaleString("en-US");
      });
      if (announce) setUrl({ segments: String(n) });
    }
    inputs.forEach(function (i) {
      i.setAttribute("data-mtb-init", "1");
      i.addEventListener("input", function () {
        var n = Math.floor(Number(i.value));
        if (n >= 1 && n <= 1e9) apply(n, true);
      });
    });
    var q = Math.floor(Number(new URLSearchParams(window.location.search).get("segments")));
    if (q >= 1 && q <= 1e9) apply(q, false);
  }

  // Filters (issue 37 item 2): one labelled <select> per fact; a row is shown when it matches every chosen value.
  function setupFilters(board) {
    var box = board.querySelector(".mtb-filters[data-filters]");
    var table = board.querySelector("table.mtb-board-table");
    if (!box || !table || box.getAttribute("data-mtb-init")) return;
    box.setAttribute("data-mtb-init", "1");
    box.addEventListener("submit", function (e) { e.preventDefault(); });  // the <form> holds selects only
    var spec;
    try { spec = JSON.parse(box.getAttribute("data-filters")); } catch (e) { return; }
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var q = new URLSearchParams(window.location.search);
    var selects = [];
    var fs = document.createElement("fieldset");
    var lg = document.createElement("legend");
    lg.textContent = "Filter rows";
    fs.appendChild(lg);
    spec.forEach(function (f) {
      var id = board.getAttribute("data-board") + "-f-" + f.key;
      var wrap = document.createElement("span");
      wrap.className = "mtb-filter";
      var label = document.createElement("label");
      label.setAttribute("for", id);
      label.textContent = f.label;
      var sel = document.createElement("select");
      sel.id = id;
      sel.setAttribute("data-filter", f.key);
      var all = document.createElement("option");
      all.value = "";
      all.textContent = "all";
      sel.appendChild(all);
      f.options.forEach(function (o) {
        var opt = document.createElement("option");
        opt.value = o[0];
        opt.textContent = o[1];
        sel.appendChild(opt);
      });
      var want = q.get(f.key);
      if (want !== null && want !== "") {
        // a value from the URL that no row of this view has stays selected (an option of its own), so the count
        // says "Showing 0 of …" honestly and the URL keeps it, rather than the filter being silently dropped
        if (!f.options.some(function (o) { return o[0] === want; })) {
          var extra = document.createElement("option");
          extra.value = want;
          extra.textContent = want + " (no row)";
          sel.appendChild(extra);
        }
        sel.value = want;
      }
      wrap.appendChild(label);
      wrap.appendChild(sel);
      fs.appendChild(wrap);
      selects.push(sel);
    });
    var count = document.createElement("p");
    count.className = "mtb-filtercount";
    count.setAttribute("role", "status");
    count.setAttribute("aria-live", "polite");
    // a disclosure: open on a wide screen or when a filter is set; closed on a phone, where six selects would take
    // half the screen (the count stays visible outside it)
    var det = document.createElement("details");
    det.className = "mtb-filterbox";
    var sum = document.createElement("summary");
    det.appendChild(sum);
    det.appendChild(fs);
    var active = selects.some(function (s) { return !!s.value; });
    det.open = active || !(window.matchMedia && window.matchMedia("(max-width: 600px)").matches);
    box.appendChild(det);
    box.appendChild(count);
    function apply(write) {
      var shown = 0, params = {};
      selects.forEach(function (s) { params[s.getAttribute("data-filter")] = s.value; });
      rows.forEach(function (r) {
        var ok = selects.every(function (s) {
          // a fact the row does not carry is "unknown" (Python leaves unknown facts out: boards.facts_attrs)
          return !s.value || (r.getAttribute("data-f-" + s.getAttribute("data-filter")) || "unknown") === s.value;
        });
        r.hidden = !ok;
        if (ok) shown += 1;
      });
      var pages = +(box.getAttribute("data-pages") || "1");
      // a paginated view: the filter sees this page's rows only, and says so
      count.textContent = "Showing " + shown + " of " + rows.length + " " + (box.getAttribute("data-rows-label") || "rows") +
        (pages > 1 ? " on this page (page " + box.getAttribute("data-page") + " of " + pages + ")" : "");
      var set = selects.filter(function (s) { return !!s.value; }).length;
      sum.textContent = "Filter rows" + (set ? " (" + set + " set)" : "");
      if (write) setUrl(params);
    }
    selects.forEach(function (s) { s.addEventListener("change", function () { apply(true); }); });
    box.hidden = false;
    apply(false);
  }

  /* issue 38 item 4: each ranked row's "⇅N" (its flip distance to the next ranked row, written by Python) becomes a
   * link to the compare page of the two rows, which finds the next row and lists the N segments (flip=<view>). */
  function setupFlips(board) {
    var cmp = board.getAttribute("data-cmp"), view = board.getAttribute("data-view");
    if (!cmp) return;
    Array.prototype.forEach.call(board.querySelectorAll("tr[data-row] i.fl"), function (i) {
      var a = document.createElement("a");
      a.className = "fl";
      a.href = cmp + "&a=" + encodeURIComponent(i.closest("tr").getAttribute("data-row")) + "&flip=" + encodeURIComponent(view);
      a.title = "Flip distance: the segments whose removal puts the next row above this one";
      a.textContent = i.textContent;
      i.parentNode.replaceChild(a, i);
    });
  }

  // a row's verification link carries no title in the HTML (issue 35: the same line on every row of a standing);
  // the legend's link to the same glossary entry has it: copied here, the tooltip is back with JavaScript
  function setupTierTitles() {
    var lines = {};
    Array.prototype.forEach.call(document.querySelectorAll(".mtb-legend a.mtb-term[title]"), function (a) {
      lines[a.getAttribute("href")] = a.getAttribute("title");
    });
    Array.prototype.forEach.call(document.querySelectorAll(".mtb-board td.c-vtier a.mtb-term:not([title])"), function (a) {
      var line = lines[a.getAttribute("href")];
      if (line) a.setAttribute("title", line);
    });
  }

  function init() {
    setupCostN();
    setupTierTitles();
    Array.prototype.forEach.call(document.querySelectorAll(".mtb-board"), setupFlips);
    Array.prototype.forEach.call(document.querySelectorAll("table.mtb-board-table"), setupTable);
    Array.prototype.forEach.call(document.querySelectorAll(".mtb-board"), setupColumns);
    Array.prototype.forEach.call(document.querySelectorAll(".mtb-board"), setupFilters);
    keepQuery();
  }

  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(init);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
