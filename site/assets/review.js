/* mtboard review page (spec §7.3; issue 18; one page for every run since issue 35): collects the reviewer's ratings and
 * downloads them as a review record (reviews/<dataset>/<run>.yaml). No server, no network: the file only leaves the
 * browser as a download. Every string goes into the YAML through JSON.stringify (a JSON string is a valid YAML
 * double-quoted scalar); status text is set with textContent only. */
(function () {
  "use strict";
  var HANDLE = /^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$/;

  function q(s) { return JSON.stringify(String(s)); }
  function today() { return new Date().toISOString().slice(0, 10); }

  function collect(form) {
    var out = [];
    Array.prototype.forEach.call(form.querySelectorAll("fieldset.mtb-rv-entry"), function (fs) {
      var id = parseInt(fs.getAttribute("data-entry"), 10);
      var picked = fs.querySelector("input[type=radio]:checked");
      var note = fs.querySelector("textarea");
      if (!picked) return;
      out.push({ id: id, rating: picked.value, note: note && note.value.trim() ? note.value.trim() : null });
    });
    return out;
  }

  function yaml(form, handle, ratings) {
    var d = form.dataset, lines = [
      "# Community review record (spec §7.3), made on the mtboard review page.",
      "record_version: 1",
      "card: " + q(d.card),
      "run_card_hash: " + q(d.hash),
      "sample_seed: " + parseInt(d.seed, 10),
      "sample_size: " + parseInt(d.size, 10),
      "reviews:",
      "  - reviewer: " + q(handle),
      "    date: " + q(today()),
      "    ratings:"];
    ratings.forEach(function (r) {
      lines.push("      - entry_id: " + r.id);
      lines.push("        rating: " + q(r.rating));
      if (r.note !== null) lines.push("        note: " + q(r.note));
    });
    return lines.join("\n") + "\n";
  }

  /* issue 35 item 1: the entries' texts come from the run's data file and the corpus file (rundata.js loads them);
   * each fieldset is built as the template built it before, text via textContent, and replaces the placeholder. */
  function el(t, x, c) { var e = document.createElement(t); if (x != null) e.textContent = x; if (c) e.className = c; return e; }
  function entry(id, out, c, box) {
    var fs = el("fieldset", null, "mtb-rv-entry"), tl = box.getAttribute("data-tl");
    fs.setAttribute("data-entry", id); fs.id = "rv-" + id;
    fs.appendChild(el("legend", "Entry " + id + " \u00b7 " + ((c && c[3]) || "no domain") + " \u00b7 difficulty " +
      (c && c[5] != null ? c[5] : "\u2014")));
    var dl = fs.appendChild(el("dl", null, "mtb-rv-texts"));
    [["Source", c ? c[1] : "", "txt", box.getAttribute("data-sl")], ["Reference (human)", c ? c[2] : "", "txt", tl],
      ["Output", out, "txt mtb-rv-out", tl]].forEach(function (x) {
      dl.appendChild(el("dt", x[0]));
      var dd = dl.appendChild(el("dd", null, x[2])); dd.lang = x[3];
      if (x[1]) dd.textContent = x[1]; else dd.appendChild(el("em", "(no output)"));
    });
    var sc = fs.appendChild(el("div", null, "mtb-rv-scale"));
    box.getAttribute("data-ratings").split(" ").forEach(function (r) {
      var lb = sc.appendChild(el("label")), i = lb.appendChild(el("input"));
      i.type = "radio"; i.name = "rating-" + id; i.value = r; lb.appendChild(document.createTextNode(" " + r));
    });
    var p = fs.appendChild(el("p", null, "mtb-rv-note")), l = p.appendChild(el("label", "Note (optional)"));
    l.htmlFor = "note-" + id; p.appendChild(document.createTextNode(" "));
    var ta = p.appendChild(el("textarea")); ta.id = ta.name = "note-" + id; ta.rows = 2; ta.maxLength = 2000;
    return fs;
  }

  /* issue 35: one review page for every run. The run comes from ?run=<16-hex page id>; its sample ("review": record
   * fields, entry ids, scale, heading) from data/runs/<id>.json.gz, the texts from the corpus file it names. */
  function fillIntro(rv) {
    var D = document, h1 = D.querySelector("article h1, h1");
    if (h1) { h1.textContent = ""; h1.appendChild(el("bdi", rv.heading, "mtb-name")); }
    D.title = D.title.replace("Review a run", rv.heading);
    Array.prototype.forEach.call(D.querySelectorAll("[data-rv]"), function (e) {
      e.textContent = String(rv[e.getAttribute("data-rv")]);
    });
    var a = D.querySelector("#mtb-rv-intro a.mtb-rv-run");
    if (a) a.setAttribute("href", rv.run_page);
    if (rv.note) {
      var sm = D.getElementById("mtb-rv-small");
      sm.querySelector(".mtb-rv-smallnote").textContent = rv.note; sm.hidden = false;
    }
    D.getElementById("mtb-rv-intro").hidden = false;
    var pick = D.getElementById("mtb-rv-pick"); if (pick) pick.hidden = true;
  }

  function start() {
    var form = document.getElementById("mtb-review");
    if (!form || form._mtb) return;
    form._mtb = true;
    var box = form.querySelector(".mtb-rv-entries[data-runs]");
    if (!box) { wire(form); return; }
    var id = new URLSearchParams(location.search).get("run");
    if (!id) return;  // no run asked: the page says how to choose one
    var pick = document.getElementById("mtb-rv-pick");
    if (!/^[0-9a-f]{16}$/.test(id)) { pick.textContent = "Not a run id: " + id + "."; pick.className = "mtb-warn"; return; }
    form.hidden = false;
    window.mtbData(box.getAttribute("data-runs") + id + ".json.gz").then(function (run) {
      var rv = run.review;
      if (!rv) throw new Error("run " + id + " has no review sample (a reference baseline is not reviewed)");
      fillIntro(rv);
      ["card", "hash", "seed", "size", "drawn", "file"].forEach(function (k) { form.setAttribute("data-" + k, rv[k]); });
      box.setAttribute("data-sl", rv.sl); box.setAttribute("data-tl", rv.tl); box.setAttribute("data-ratings", rv.ratings.join(" "));
      return window.mtbData(run.corpus).then(function (corpus) {
        var outs = {}, texts = {};
        run.rows.forEach(function (r) { outs[r[0]] = r[1]; });
        corpus.entries.forEach(function (e) { texts[e[0]] = e; });
        rv.ids.forEach(function (k) { form.insertBefore(entry(k, outs[k], texts[k], box), box); });
        box.remove();
        form.setAttribute("data-loaded", "1");
        wire(form);
      });
    }).catch(function (err) {
      box.appendChild(el("p", window.mtbDataMessage(err), "mtb-warn mtb-rd-error"));
    });
  }

  function wire(form) {
    var status = document.getElementById("mtb-rv-status"), handle = document.getElementById("mtb-rv-handle");
    var total = form.querySelectorAll("fieldset.mtb-rv-entry").length;
    function say(t) { status.textContent = t; }
    form.addEventListener("change", function () { say(collect(form).length + " of " + total + " entries rated"); });
    document.getElementById("mtb-rv-download").addEventListener("click", function () {
      var h = handle.value.trim();
      if (!HANDLE.test(h)) { say("Enter your GitHub handle first (letters, digits and single hyphens)."); handle.focus(); return; }
      var ratings = collect(form);
      if (!ratings.length) { say("Rate at least one entry first."); return; }
      var blob = new Blob([yaml(form, h, ratings)], { type: "application/yaml" });
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = form.dataset.file;
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
      say("Downloaded " + form.dataset.file + ": " + ratings.length + " of " + total + " entries rated" +
          (ratings.length < total ? " (rate all of them for a review that can confirm a tier)." : "."));
    });
  }

  if (typeof document$ !== "undefined" && document$.subscribe) document$.subscribe(start);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
