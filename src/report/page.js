// Choosing the base recomputes every relative table and the statistics drawn from them, with
// the same rules as dbperf: ratio rounded to 2 decimals, "1" when both are 0, "inf" when only
// the base is 0, highlighted at or beyond the thresholds. Against another base than the report's
// that is on the threshold alone (the confidence intervals are dbperf's, for the report's base),
// so such a cell is marked unconfirmed, as dbperf marks a cell without an interval. Unticking a
// target hides its rows and lines. Nothing else runs: the page is complete without this script.
(function () {
  "use strict";
  var body = document.body;
  var low = parseFloat(body.getAttribute("data-lo"));
  var high = parseFloat(body.getAttribute("data-hi"));
  var given = body.getAttribute("data-base");

  function num(s) {
    return s === null || s === "" ? null : parseFloat(s);
  }

  function ratio(v, b) {
    if (v === null || b === null) return null;
    if (b === 0) return v === 0 ? { t: "1", r: 1, one: true } : { t: "inf", r: Infinity };
    var r = Math.round((v / b) * 100) / 100;
    return { t: r.toFixed(2), r: r };
  }

  function relTable(t, base, name) {
    var baseRow = t.querySelector('tbody tr[data-t="' + base + '"]');
    if (!baseRow) return;
    var bcells = baseRow.querySelectorAll("td");
    var rows = t.querySelectorAll("tbody tr");
    for (var k = 0; k < rows.length; k++) {
      var cells = rows[k].querySelectorAll("td");
      for (var i = 0; i < cells.length; i++) {
        var c = cells[i];
        if (!c.hasAttribute("data-v")) continue;
        var b = bcells[i] && bcells[i].hasAttribute("data-v") ? num(bcells[i].getAttribute("data-v")) : null;
        var r = ratio(num(c.getAttribute("data-v")), b);
        c.classList.remove("worse", "better", "unconfirmed-worse", "unconfirmed-better", "gap");
        if (!r) {
          c.textContent = "\u2014";
          c.classList.add("gap");
          c.removeAttribute("data-r");
          continue;
        }
        c.textContent = r.t;
        c.setAttribute("data-r", r.r === Infinity ? "inf" : String(r.r));
        if (base === given && c.hasAttribute("data-m")) {
          // dbperf's own verdict against this base: the interval decided it, not the ratio.
          var m = c.getAttribute("data-m");
          if (m) c.classList.add(m);
          continue;
        }
        var d = parseInt(c.getAttribute("data-d"), 10);
        var lo = !r.one && r.r <= low;
        var hi = !r.one && r.r >= high;
        if ((d > 0 && lo) || (d < 0 && hi)) c.classList.add("unconfirmed-worse");
        else if ((d > 0 && hi) || (d < 0 && lo)) c.classList.add("unconfirmed-better");
      }
      rows[k].classList.toggle("base", rows[k] === baseRow);
    }
    var bn = t.querySelector(".bn");
    if (bn) bn.textContent = name;
  }

  function statsTable(t) {
    var src = document.getElementById(t.getAttribute("data-src"));
    if (!src) return;
    var rows = t.querySelectorAll("tbody tr");
    for (var k = 0; k < rows.length; k++) {
      var s = src.querySelector('tbody tr[data-t="' + rows[k].getAttribute("data-t") + '"]');
      var vals = [];
      if (s) {
        var cs = s.querySelectorAll("td[data-r]");
        for (var i = 0; i < cs.length; i++) {
          var v = cs[i].getAttribute("data-r");
          if (v !== "inf") vals.push(parseFloat(v));
        }
      }
      var out = rows[k].querySelectorAll("td");
      if (!vals.length) {
        for (var j = 0; j < out.length; j++) out[j].textContent = "\u2014";
        continue;
      }
      var n = vals.length;
      var mean = vals.reduce(function (a, b) { return a + b; }, 0) / n;
      var sorted = vals.slice().sort(function (a, b) { return a - b; });
      var med = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      var sd = Math.sqrt(vals.reduce(function (a, b) { return a + (b - mean) * (b - mean); }, 0) / n);
      var res = [mean, med, sorted[0], sorted[n - 1], sd];
      for (var m = 0; m < out.length && m < res.length; m++) {
        out[m].textContent = res[m].toFixed(2);
        out[m].classList.remove("gap");
      }
    }
  }

  function chooseBase(base) {
    var opt = document.querySelector('#base option[value="' + base + '"]');
    var name = opt ? opt.textContent : "";
    var tables = document.querySelectorAll("table.k-relative");
    for (var i = 0; i < tables.length; i++) relTable(tables[i], base, name);
    var stats = document.querySelectorAll("table.k-stats");
    for (var j = 0; j < stats.length; j++) statsTable(stats[j]);
    var notes = document.querySelectorAll(".static-note");
    for (var k = 0; k < notes.length; k++) notes[k].hidden = base === given;
  }

  var select = document.getElementById("base");
  if (select) {
    select.addEventListener("change", function () { chooseBase(select.value); });
    // report.html#base=2 opens with the third target as the base (a link to share).
    var m = /base=(\d+)/.exec(window.location.hash);
    if (m && document.querySelector('#base option[value="' + m[1] + '"]')) {
      select.value = m[1];
      chooseBase(m[1]);
    }
  }
  var boxes = document.querySelectorAll("input.tgl");
  for (var i = 0; i < boxes.length; i++) {
    boxes[i].addEventListener("change", function (e) {
      var t = e.target.getAttribute("data-t");
      var els = document.querySelectorAll('tr[data-t="' + t + '"], svg [data-t="' + t + '"]');
      for (var k = 0; k < els.length; k++) els[k].classList.toggle("hid", !e.target.checked);
    });
  }
  body.setAttribute("data-ready", "1");
})();
