/* mtboard run data (issue 35 item 1): the run page's entry tables are built here from two gzip JSON files — the
 * run's data/runs/<id>.json.gz (outputs, outcomes, sentence chrF++, the page's entry groups) and the corpus's
 * data/corpora/<dataset>-v<version>-<sha12>.json.gz (sources, references) — joined by entry id. window.mtbData(url) is the
 * one loader (the compare page uses it too): fetch, then gunzip with DecompressionStream when the bytes start with
 * the gzip magic 1f 8b, else parse as-is (a server that already decoded it). Text goes in via textContent only. */
(function () {
  "use strict";
  var D = document, cache = {};
  var NOSERVER = "Open the site through a web server (mtboard build --serve, or python3 -m http.server -d " +
    "build/site): browsers do not fetch data files from file:// pages.";
  /* what a visitor reads when a data file fails: the file and why, plus the web-server advice only under file:// (a
   * served site that answers 404 has another problem) */
  function message(err) {
    return "The entry data could not be loaded (" + (err && err.message || err) + ")." +
      (location.protocol === "file:" ? " " + NOSERVER : "");
  }

  function load(url) {
    if (!cache[url]) cache[url] = fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.arrayBuffer();
    }).then(function (buf) {
      var b = new Uint8Array(buf);
      if (b.length > 1 && b[0] === 0x1f && b[1] === 0x8b) {
        var s = new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"));
        return new Response(s).text();
      }
      return new TextDecoder("utf-8").decode(b);
    }).then(JSON.parse);
    return cache[url];
  }
  window.mtbData = load;
  window.mtbDataError = NOSERVER;
  window.mtbDataMessage = message;

  function el(t, x, c) { var e = D.createElement(t); if (x != null) e.textContent = x; if (c) e.className = c; return e; }
  function td(label, cls, lang) {
    var c = el("td", null, cls); c.setAttribute("data-label", label); if (lang) c.lang = lang; return c;
  }

  var SEM = {"meaning-mismatch": "meaning mismatch", "hallucination": "hallucination"};

  /* one row as the server rendered it before (templates/_pages.j2 seg_row) */
  function segRow(r, c, sl, tl, anchor) {
    // r: [id, output, outcome, chrF++ (2 dp), failed, delta, flags, raw, error, chrF++ (1 dp: shown), semantic tags,
    //     (only when the entry was asked again, issue 39) failed answers [[format rule, raw answer], …]]
    // c: [id, source, reference, …]
    var id = r[0], flags = r[6] || [], sem = r[10] || [], tr = el("tr");
    if (anchor) tr.id = "seg-" + id;
    tr.setAttribute("data-f", [r[4] ? "failed" : "ok", r[2]].concat(flags.map(function (f) { return "flag:" + f; }), sem).join(" "));
    if (r[4]) tr.className = "mtb-fail";
    var a = el("a", String(id)); a.href = "#seg-" + id; a.title = "link to entry " + id;
    var x = td("Entry"); x.appendChild(a); tr.appendChild(x);
    x = td("Source", "txt", sl); x.textContent = c ? c[1] : ""; tr.appendChild(x);
    x = td("Reference", "txt", tl); x.textContent = c ? c[2] : ""; tr.appendChild(x);
    x = td("Output", "txt", tl); x.appendChild(D.createTextNode(r[1]));
    if (r[7] != null) {
      var d = el("details"); d.appendChild(el("summary", "raw output")); d.appendChild(el("span", r[7], "txt")); x.appendChild(d);
    }
    if (r[8] != null) { x.appendChild(el("br")); x.appendChild(el("em", "error: " + r[8])); }
    tr.appendChild(x);
    x = td("Outcome"); x.appendChild(D.createTextNode((r[4] ? "\u2717 " : "") + r[2]));
    flags.forEach(function (f) { x.appendChild(el("br")); x.appendChild(D.createTextNode("\u2691 " + f)); });
    // the semantic verdict beside the mechanical outcome (issue 36 item 4; runpage.SEMANTIC_TAGS)
    if (sem.length) {
      x.appendChild(el("br"));
      x.appendChild(el("span", "\u2260 " + sem.map(function (t) { return SEM[t] || t; }).join(", ") + " (semantic)", "mtb-sem"));
    }
    // format attempts (issue 39): the answers asked again for, each with the format rule it failed
    if (r[11] && r[11].length) {
      x.appendChild(el("br"));
      var fa = el("details");
      fa.appendChild(el("summary", "\u21bb " + (r[11].length + 1) + " format attempts (penalised)"));
      r[11].forEach(function (a, k) {
        fa.appendChild(el("span", "attempt " + (k + 1) + ", " + a[0] + ": "));
        fa.appendChild(el("span", a[1] == null ? "(no text)" : a[1], "txt"));
        fa.appendChild(el("br"));
      });
      x.appendChild(fa);
    }
    tr.appendChild(x);
    x = td("chrF++", "num"); x.textContent = r[9].toFixed(1); tr.appendChild(x);
    x = td("vs field", "num"); x.textContent = r[5] == null ? "\u2014" : (r[5] < 0 || Object.is(r[5], -0) ? "-" : "+") + Math.abs(r[5]).toFixed(1); tr.appendChild(x);
    return tr;
  }

  /* the entry tables' header (templates/_pages.j2 seg_table): the page sends each table's caption only */
  var COLS = ["Entry", "Source", "Reference", "Output", "Outcome", "chrF++", "vs field"];
  function head() {
    var h = D.createElement("thead"), tr = h.appendChild(el("tr"));
    COLS.forEach(function (c) {
      var th = tr.appendChild(el("th", c)); th.scope = "col";
      if (c === "vs field") th.title = "sentence chrF++ minus the field median of real systems";
    });
    return h;
  }

  /* a "Details" table of the run page (issue 35; templates/_macros.j2 kv): [label, value] rows, null as a dash */
  function kv(rows) {
    var t = el("table", null, "mtb-kv"), b = t.appendChild(D.createElement("tbody"));
    rows.forEach(function (r) {
      var tr = b.appendChild(el("tr")), c = el("td");
      tr.appendChild(el("th", r[0]));
      if (r[1] === null) c.textContent = "\u2014"; else c.appendChild(el("bdi", r[1], "mtb-name"));
      tr.appendChild(c);
    });
    return t;
  }

  /* the fingerprint, closest-run and signature tables (issue 35; runpage.details_data): {head, rows, code, cls} */
  function more(t, sp) {
    if (sp.head) {
      var h = t.appendChild(D.createElement("thead")).appendChild(el("tr"));
      sp.head.forEach(function (x) { h.appendChild(el("th", x)).scope = "col"; });
    }
    var b = t.appendChild(D.createElement("tbody"));
    sp.rows.forEach(function (r) {
      var tr = b.appendChild(el("tr", null, sp.cls));
      tr.appendChild(el("th", r[0])).scope = "row";
      r.slice(1).forEach(function (v) {
        var c = tr.appendChild(el("td"));
        if (v === null) c.textContent = "\u2014"; else c.appendChild(el(sp.code ? "code" : "bdi", v, sp.code ? null : "mtb-name"));
      });
    });
  }

  function fill(box) {
    if (box._mtb) return; box._mtb = true;
    Promise.all([load(box.getAttribute("data-run")), load(box.getAttribute("data-corpus"))]).then(function (z) {
      var run = z[0], rows = {}, texts = {};
      run.rows.forEach(function (r) { rows[r[0]] = r; });
      z[1].entries.forEach(function (e) { texts[e[0]] = e; });
      Array.prototype.forEach.call(box.querySelectorAll("table[data-group]"), function (t) {
        if (!t.tHead) t.appendChild(head());
        var body = t.tBodies[0] || t.appendChild(D.createElement("tbody")), sl = box.getAttribute("data-sl"), tl = box.getAttribute("data-tl"), an = t.hasAttribute("data-anchor");
        (run.groups[t.getAttribute("data-group")] || []).forEach(function (id) {
          if (rows[id]) body.appendChild(segRow(rows[id], texts[id], sl, tl, an));
        });
      });
      (run.details ? D.querySelectorAll("details.mtb-more[data-key]") : []).forEach(function (d) {
        var rows = run.details[d.getAttribute("data-key")];
        if (rows) { d.appendChild(kv(rows)); var n = d.querySelector(".mtb-more-note"); if (n) n.remove(); }
      });
      (run.details ? D.querySelectorAll("table[data-more]") : []).forEach(function (t) {
        var sp = run.details[t.getAttribute("data-more")];
        if (sp) { more(t, sp); var n = t.querySelector(".mtb-more-note"); if (n) n.remove(); }
      });
      box.setAttribute("data-loaded", "1");
      if (location.hash.length > 1) window.dispatchEvent(new HashChangeEvent("hashchange"));
    }).catch(function (err) {
      var p = el("p", message(err), "mtb-warn mtb-rd-error");
      box.insertBefore(p, box.firstChild);
    });
  }

  function init() { Array.prototype.forEach.call(D.querySelectorAll(".mtb-rd[data-run]"), fill); }
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(init);
  else if (D.readyState === "loading") D.addEventListener("DOMContentLoaded", init); else init();
})();
