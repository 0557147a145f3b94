/* mtboard run, compare pages: entry anchors open their <details>, entry filter, side-by-side pager, and
 * compare.html joining two runs' precomputed data. Every statistic is computed in Python; text via textContent only.
 * Data files (issue 35 item 1) come through loadJSON (rundata.js's window.mtbData): plain or gzip JSON (data/runs/<id>.json.gz, data/corpora/…). */
(function () {
  "use strict";
  var D = document, $ = function (s, r) { return (r || D).querySelector(s); },
    $$ = function (s, r) { return Array.prototype.slice.call((r || D).querySelectorAll(s)); };
  function el(t, x, c) { var e = D.createElement(t); if (x != null) e.textContent = x; if (c) e.className = c; return e; }
  function row(cells, th) {
    var tr = el("tr");
    cells.forEach(function (x, i) { var c = el(i || !th ? "td" : "th", x); if (i === 0 && th) c.scope = "row"; tr.appendChild(c); });
    return tr;
  }
  function table(cap, head, rows, cls) {
    var t = el("table", null, cls || "mtb-plain"), h = el("tr");
    t.tabIndex = 0;
    t.appendChild(el("caption", cap));
    head.forEach(function (x) { var c = el("th", x); c.scope = "col"; h.appendChild(c); });
    t.appendChild(el("thead")).appendChild(h);
    var b = t.appendChild(el("tbody"));
    rows.forEach(function (r) { b.appendChild(r.nodeType ? r : row(r, 1)); });
    return t;
  }
  function f(x, d) { return x == null ? "\u2014" : x.toFixed(d); }
  function pt(p) { return p == null ? "\u2014" : p < 0.001 ? "< 0.001" : p.toFixed(3); }
  function s(x, d) { return x == null ? "\u2014" : (x >= 0 ? "+" : "") + x.toFixed(d); }

  /* Every data file comes through rundata.js's one loader (window.mtbData: plain or gzip JSON); this adds the file's
   * name and, under file://, what a visitor can do about it. */
  function loadJSON(url) {
    return window.mtbData(url).catch(function (e) {
      throw new Error("Could not load " + url + " (" + (e && e.message || e) + ")." +
        (location.protocol === "file:" ? " " + window.mtbDataError : ""));
    });
  }
  function fail(box, e) { box.appendChild(el("p", String(e && e.message || e), "mtb-warn mtb-loadfail")); }

  /* The side-by-side table of runs A and B, built into `box` (inside a .mtb-cmp) from A's and B's run data and the
   * corpus texts; `ids`: the board's entries (null: every entry both runs and the corpus hold). Sorted by |Δ| then id. */
  function sideBySide(box, urls, ids, tie, sl, tl) {
    return Promise.all(urls.map(loadJSON)).then(function (z) {
      var ma = {}, mb = {}, mc = {}, rows = [];
      z[0].rows.forEach(function (r) { ma[r[0]] = r; }); z[1].rows.forEach(function (r) { mb[r[0]] = r; });
      z[2].entries.forEach(function (r) { mc[r[0]] = r; });
      (ids || z[2].entries.map(function (r) { return r[0]; })).forEach(function (id) {
        var a = ma[id], b = mb[id], e = mc[id]; if (!a || !b || !e) return;
        var d = a[3] - b[3], k = Math.abs(d) < tie ? "tie" : d > 0 ? "a" : "b", tr = el("tr"), c0 = el("td"), ln = el("a", String(id));
        tr.id = "seg-" + id; tr.setAttribute("data-k", k + (a[4] && b[4] ? " fail" : ""));
        ln.href = "#seg-" + id; c0.appendChild(ln); c0.setAttribute("data-label", "Entry");
        if (e[3]) { c0.appendChild(el("br")); c0.appendChild(el("span", e[3], "mtb-muted")); }
        tr.appendChild(c0);
        [[e[1], sl], [e[2], tl], [a[1] + (a[4] ? " (\u2717 " + a[2] + ")" : ""), tl], [b[1] + (b[4] ? " (\u2717 " + b[2] + ")" : ""), tl],
          [a[3].toFixed(1) + " \u2212 " + b[3].toFixed(1) + " = " + s(d, 1) + " " + (k === "tie" ? "tie" : k.toUpperCase())]].forEach(function (x, n) {
          var td = el("td", x[0], n < 4 ? "txt" : "num"); td.setAttribute("data-label", ["Source", "Reference", "A", "B", "\u0394 chrF++"][n]);
          if (x[1]) td.lang = x[1]; tr.appendChild(td);
        });
        rows.push([-Math.abs(d), id, tr]);
      });
      rows.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
      var fl = el("p", null, "mtb-cmpfilter");
      fl.appendChild(el("span", "Show:"));
      ["", "a", "b", "fail"].forEach(function (k, n) {
        var lb = el("label"), r = el("input"); r.type = "radio"; r.name = "mtb-k"; r.value = k;
        lb.appendChild(D.createTextNode(" ")); lb.appendChild(r); lb.appendChild(D.createTextNode(" " + ["all", "A better", "B better", "both fail"][n] + " ")); fl.appendChild(lb);
      });
      box.appendChild(fl);
      box.appendChild(table("Entries sorted by the size of the sentence chrF++ difference", ["Entry", "Source", "Reference", "A", "B", "\u0394 chrF++ (A \u2212 B)"], rows.map(function (r) { return r[2]; }), "mtb-segs mtb-sbs"));
      box.appendChild(el("p", null, "mtb-pager"));
    });
  }
  function staticPair(box) {
    var note = $(".mtb-sbs-note", box), cmp = box.closest(".mtb-cmp");
    note.hidden = true;
    var g = function (k) { return box.getAttribute("data-" + k); };
    sideBySide(box, [g("a"), g("b"), g("corpus")], null, +g("tie"), g("sl"), g("tl")).then(function () {
      pager(cmp); openHash();
    }, function (e) { note.hidden = false; fail(box, e); });
  }

  function openHash() {
    var t = location.hash.length > 1 && D.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!t) return;
    for (var p = t.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    var cmp = t.closest(".mtb-cmp"); if (cmp && cmp._page) cmp._page(t);
    $$(".mtb-target").forEach(function (x) { x.classList.remove("mtb-target"); });
    t.classList.add("mtb-target");  // rows made after load never match :target (pages.css)
    t.scrollIntoView();
  }

  function segFilter(sel) {
    sel.parentElement.parentElement.hidden = false;
    var out = $(".mtb-segcount");
    sel.addEventListener("change", function () {
      var v = sel.value, n = 0;
      $$(".mtb-domgroup").forEach(function (d) {
        var k = 0;
        $$("tr[data-f]", d).forEach(function (tr) {
          var ok = !v || tr.getAttribute("data-f").split(" ").indexOf(v) >= 0;
          tr.hidden = !ok; if (ok) k++;
        });
        d.open = !!v && k > 0; n += k;
      });
      out.textContent = v ? n + " entries match" : "";
    });
  }

  function pager(box) {
    var per = +box.getAttribute("data-per-page") || 25, pg = $(".mtb-pager", box), cur = 0, rows, k = "";
    function show(p) {
      rows = $$(".mtb-sbs tbody tr", box);
      var vis = rows.filter(function (r) { return !k || r.getAttribute("data-k").split(" ").indexOf(k) >= 0; });
      var n = Math.max(1, Math.ceil(vis.length / per)); cur = Math.min(Math.max(p, 0), n - 1);
      rows.forEach(function (r) { r.hidden = true; });
      vis.slice(cur * per, cur * per + per).forEach(function (r) { r.hidden = false; });
      while (pg.firstChild) pg.removeChild(pg.firstChild);
      pg.hidden = false;
      [["\u2190 previous", cur - 1], ["next \u2192", cur + 1]].forEach(function (b, i) {
        var e = el("button", b[0], "md-button"); e.type = "button"; e.disabled = b[1] < 0 || b[1] >= n;
        e.onclick = function () { show(b[1]); }; pg.appendChild(e);
        if (!i) pg.appendChild(el("span", " page " + (cur + 1) + " of " + n + " (" + vis.length + " entries) "));
      });
      return vis;
    }
    box._page = function (t) { k = ""; var v = show(0); show(Math.floor(v.indexOf(t) / per)); };
    $$("input[name=mtb-k]", box).forEach(function (r) {
      r.checked = !r.value; r.onchange = function () { k = r.value; show(0); };
    });
    show(0);
  }

  /* The flip distance of A over B on one view (issue 38 item 4): a sentence with links to the segments' rows. */
  function flipNote(fl) {
    var p = el("p", null, "mtb-flipnote");
    if (fl.n == null) {
      p.textContent = "Flip distance (" + fl.view + "): no removal of fewer than all the view's segments puts B above A.";
      return p;
    }
    p.appendChild(D.createTextNode("Flip distance (" + fl.view + "): removing " + (fl.n === 1 ? "this segment" : "these " + fl.n + " segments") +
      " from the view puts B above A (greedy count, an upper bound on the fewest):"));
    fl.ids.forEach(function (id) { var a = el("a", String(id)); a.href = "#seg-" + id; p.appendChild(D.createTextNode(" ")); p.appendChild(a); });
    return p;
  }
  function markFlip(box, fl) {
    fl.ids.forEach(function (id) {
      var tr = D.getElementById("seg-" + id); if (tr) tr.setAttribute("data-k", tr.getAttribute("data-k") + " flip");
    });
    var f = $(".mtb-cmpfilter", box); if (!f || !fl.ids.length) return;
    var lb = el("label"), r = el("input"); r.type = "radio"; r.name = "mtb-k"; r.value = "flip";
    lb.appendChild(D.createTextNode(" ")); lb.appendChild(r); lb.appendChild(D.createTextNode(fl.n === 1 ? " the segment that flips the order " : " the " + fl.n + " that flip the order ")); f.appendChild(lb);
  }

  function app(box) {
    var bs = $(".mtb-cmp-board", box), sa = $(".mtb-cmp-a", box), sb = $(".mtb-cmp-b", box),
      out = $(".mtb-cmp-out", box), q = new URLSearchParams(location.search), data = null;
    box.hidden = false; $(".mtb-nojs").hidden = true;
    if (q.get("board")) bs.value = q.get("board");
    else $$("option", bs).forEach(function (o) { if (o.getAttribute("data-ids").split(" ").indexOf(q.get("a")) >= 0) bs.value = o.value; });
    var chunks = {}, fps = {}, flipAsked = null;
    function at(rel) { return new URL(rel, base).href; }  // a data file named relative to pairs.json
    var base = null;
    function load() {
      base = new URL(bs.selectedOptions[0].getAttribute("data-src"), location.href);
      loadJSON(base.href).then(function (d) {
        data = d; chunks = {}; fps = {};
        [sa, sb].forEach(function (x) {
          while (x.firstChild) x.removeChild(x.firstChild);
          d.runs.forEach(function (r) { var o = el("option", r.rank + " \u00b7 " + r.label + " \u00b7 " + r.id.slice(0, 8)); o.value = r.id; x.appendChild(o); });
        });
        var al = d.aliases || {};  // a reproduction's id opens its row (one row per method: never itself)
        ["a", "b"].forEach(function (k) { if (q.get(k) && al[q.get(k)]) q.set(k, al[q.get(k)]); });
        var ids = d.runs.map(function (r) { return r.id; }), miss = ["a", "b"].filter(function (k) {
          return q.get(k) && ids.indexOf(q.get(k)) < 0; }).map(function (k) { return q.get(k); });
        sa.value = ids.indexOf(q.get("a")) >= 0 ? q.get("a") : ids[0];
        sb.value = ids.indexOf(q.get("b")) >= 0 && q.get("b") !== sa.value ? q.get("b") : ids[sa.value === ids[0] ? 1 : 0];
        var warn = function () {
          if (miss.length) out.insertBefore(el("p", "No run " + miss.join(", ") + " on this board: showing the default pair instead.", "mtb-warn"), out.firstChild);
        };
        flipAsked = null;
        var fv = q.get("flip"), ia = ids.indexOf(sa.value);
        if (!fv || ia < 0) { draw(); warn(); return; }
        // issue 38 item 4: opened from a board's "⇅N": B is the next ranked row of that view, the N segments are marked
        chunk(Math.floor(ia / d.chunk)).then(function (ch) {
          var F = ((ch.flips || {})[ia] || {})[fv];
          if (F) { sb.value = ids[F[1]]; flipAsked = { view: fv, n: F[0], ids: F[2], a: sa.value, b: sb.value }; }
          draw(); warn();
        }, function () { draw(); warn(); });
      }, function (e) { while (out.firstChild) out.removeChild(out.firstChild); fail(out, e); });
    }
    function chunk(k) {  // pair statistics of rows [k·chunk, k·chunk + chunk), fetched once per board
      if (!(k in chunks)) chunks[k] = k < data.chunks.length ? loadJSON(at(data.chunks[k])) : Promise.resolve({ rows: [] });
      return chunks[k];
    }
    function fp() { if (!fps.p) fps.p = loadJSON(at(data.fp)); return fps.p; }
    function draw() {
      var R = data.runs, ids = R.map(function (r) { return r.id; }), i = ids.indexOf(sa.value), j = ids.indexOf(sb.value);
      var A = R[i], B = R[j], flip = i > j, lo = Math.min(i, j), hi = Math.max(i, j);
      q.set("board", bs.value); q.set("a", A.id); q.set("b", B.id);
      history.replaceState(null, "", "?" + q.toString() + location.hash);
      while (out.firstChild) out.removeChild(out.firstChild);
      if (i === j) { out.appendChild(el("p", "Pick two different runs.")); return; }
      var c = el("div", null, "mtb-cmp"); c.setAttribute("data-per-page", "25"); out.appendChild(c);
      [["A", A], ["B", B]].forEach(function (x) {
        c.appendChild(el("p", x[0] + " \u00b7 " + x[1].label + " \u00b7 rank " + x[1].rank + " \u00b7 composite " + f(x[1].composite, 3) + " " + x[1].ci + " \u00b7 chrF++ " + f(x[1].chrf, 1) + " \u00b7 " + x[1].tier, "mtb-cmp-head"));
      });
      var v = el("div", null, "mtb-verdict"); c.appendChild(v);
      c.appendChild(table("Per domain (A \u2212 B)", ["Domain", "Composite A", "Composite B", "\u0394 composite", "\u0394 chrF++"],
        data.domains.filter(function (d) { return A.dom[d] && B.dom[d]; }).map(function (d) {
          var a = A.dom[d], b = B.dom[d];
          return [d, f(a[0], 3), f(b[0], 3), a[0] == null || b[0] == null ? "\u2014" : s(a[0] - b[0], 3), a[1] == null || b[1] == null ? "\u2014" : s(a[1] - b[1], 1)]; })));
      var sbs = el("div"); c.appendChild(sbs);
      var fd = el("details"); c.appendChild(fd);
      var stats = hi - lo > data.span ? Promise.resolve(null) : chunk(Math.floor(lo / data.chunk)).then(function (ch) {
        var P = null; ch.rows.forEach(function (p) { if (p[0] === lo && p[1] === hi) P = p; }); return P; });
      var shown = stats.then(function (P) {
        if (!P) {
          v.appendChild(el("p", "These runs are more than " + data.span + " rows apart: their paired statistics are not precomputed (every pair within " + data.span + " rows is).", "mtb-warn"));
          return;
        }
        var m = [[P[2], P[3], P[4], P[5]], [P[6], P[7], P[8], P[9]]].map(function (x) {
          return flip ? [-x[0], -x[2], -x[1], x[3]] : x; });
        var w = flip ? P[12] : P[10], l = flip ? P[10] : P[12], sig = m[0][3] < data.alpha && m[0][0] !== 0;
        v.appendChild(el("p", sig ? (m[0][0] > 0 ? A : B).label + " is better than " + (m[0][0] > 0 ? B : A).label + ": composite difference " + Math.abs(m[0][0]).toFixed(3) + ", significant (p " + (m[0][3] < 0.001 ? "< 0.001" : "= " + m[0][3].toFixed(3)) + ", \u03b1 = " + data.alpha + ")."
          : "No detectable difference: composite difference " + s(m[0][0], 3) + ", p = " + pt(m[0][3]) + (data.mdd != null ? "; the smallest difference this board detects is \u2248 " + data.mdd.toFixed(3) : "") + ".", "mtb-verdict-s"));
        v.appendChild(table("Paired difference A \u2212 B", ["Metric", "A", "B", "A \u2212 B [95% CI]", "p"],
          [["Composite", f(A.composite, 3), f(B.composite, 3), 3], ["chrF++", f(A.chrf, 1), f(B.chrf, 1), 1]].map(function (r, k) {
            return [r[0], r[1], r[2], s(m[k][0], r[3]) + " [" + s(m[k][1], r[3]) + ", " + s(m[k][2], r[3]) + "]", pt(m[k][3])]; })));
        v.appendChild(el("p", "Segments: A better on " + w + " \u00b7 tie on " + P[11] + " \u00b7 B better on " + l + " (tie: |\u0394 sentence chrF++| < " + data.tie_chrf + "; failures 0). p: two-sided, uncorrected."));
      }, function (e) { fail(v, e); });
      var rd = function (id) { return at(data.rundata.replace("{id}", id)); };
      sbs.hidden = true;  // shown with the statistics above it, so the page does not jump
      var fl = flipAsked && flipAsked.a === A.id && flipAsked.b === B.id ? flipAsked : null;
      if (fl) c.insertBefore(flipNote(fl), sbs);
      Promise.all([shown, sideBySide(sbs, [rd(A.id), rd(B.id), at(data.corpus)], data.ids, data.tie_chrf, null, null)]).then(function () {
        sbs.hidden = false;
        if (fl) markFlip(sbs, fl);
        pager(c);
        if (fl && fl.ids.length) { var r = $("input[name=mtb-k][value=flip]", c); r.checked = true; r.onchange(); }
        openHash();
      }, function (e) { sbs.hidden = false; fail(sbs, e); });
      fp().then(function (F) {
        var ra = F.runs[i], rb = F.runs[j], val = function (r, n) { return r[n] < 0 ? "\u2014" : F.values[n][r[n]]; };
        var keys = F.components.map(function (k, n) { return n; }).filter(function (n) { return ra[n] !== rb[n]; });
        fd.appendChild(el("summary", "Fingerprint difference (" + keys.length + " differing component(s))"));
        fd.appendChild(table("Differing fingerprint components", ["Component", "A", "B"], keys.map(function (n) { return [F.components[n], val(ra, n), val(rb, n)]; }), "mtb-kv mtb-cmp-table"));
      }, function (e) { fail(fd, e); });
    }
    bs.onchange = function () { q.delete("a"); q.delete("b"); load(); };
    sa.onchange = sb.onchange = draw;
    load();
  }

  // a table wider than the page scrolls inside its box (Material's wrapper, or the table itself): keyboard users
  // reach it by Tab, and a screen reader hears what it is (axe: scrollable-region-focusable)
  function scrollables() {
    $$(".md-typeset__scrollwrap, .md-typeset table").forEach(function (el) {
      if (el.scrollWidth <= el.clientWidth || el.hasAttribute("tabindex") || el.closest("[tabindex]")) return;
      el.setAttribute("tabindex", "0");
      if (!el.hasAttribute("role") && el.tagName !== "TABLE") {
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", "Table (scrolls sideways)");
      }
    });
  }

  function init() {
    scrollables();
    $$(".mtb-sbs-box").forEach(staticPair);
    $$(".mtb-segsel").forEach(segFilter);
    var a = D.getElementById("mtb-cmp-app"); if (a) app(a);
    openHash();
  }
  window.addEventListener("hashchange", openHash);
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(init);
  else if (D.readyState === "loading") D.addEventListener("DOMContentLoaded", init); else init();
})();
