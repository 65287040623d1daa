// The website as a reader meets it (loaded on every page by _ext/reader_path.py):
//
// * progress: the self-check questions keep each chapter's answers in this browser
//   (localStorage, keys STORE + quiz name, written by chapters/book_support/exercises/quiz.js with the
//   page they belong to); the list of chapters then marks each chapter whose questions
//   are all answered correctly with a tick, and one begun with its score ("2/5"). The
//   marks follow every answer ("attn-quiz-progress" events) and answers given in other
//   tabs ("storage" events).
// * heat maps in the explorers: the value of the cell under the pointer, or of the cell
//   chosen with the arrow keys once the map has the keyboard focus, is written under the
//   map (a live region, so a screen reader reads it) and the cell is outlined. The values
//   and the grid's geometry are stored on the map by chapters/book_support/figures/svg.py.
(function () {
  "use strict";
  var STORE = "attention-executable:quiz:";

  // ---------------------------------------------------------------- progress
  function records() {
    var found = [];
    try {
      for (var i = 0; i < window.localStorage.length; i += 1) {
        var key = window.localStorage.key(i);
        if (key.indexOf(STORE) !== 0) continue;
        var record = JSON.parse(window.localStorage.getItem(key));
        if (record && record.page) found.push(record);
      }
    } catch (error) { /* storage blocked or unreadable: no marks */ }
    return found;
  }

  function markChapters() {
    var byPage = {};
    records().forEach(function (r) { byPage[r.page] = r; });
    document.querySelectorAll(".bd-docs-nav a.reference.internal").forEach(function (a) {
      a.querySelectorAll(".reader-progress").forEach(function (old) { old.remove(); });
      var path;
      try { path = new URL(a.href, document.baseURI).pathname; } catch (e) { return; }
      if (a.getAttribute("href") === "#") path = window.location.pathname;
      var r = byPage[path];
      if (!r || !r.total || !(r.correct > 0)) return;
      var mark = document.createElement("span");
      mark.className = "reader-progress" + (r.done ? " done" : "");
      if (r.done) {
        mark.textContent = "\u2713";
        mark.title = "self-check questions all answered correctly";
      } else {
        mark.textContent = r.correct + "/" + r.total;
        mark.title = r.correct + " of " + r.total + " self-check questions answered";
      }
      var spoken = document.createElement("span");
      spoken.className = "visually-hidden";
      spoken.textContent = " (" + mark.title + ")";
      mark.setAttribute("aria-hidden", "true");
      a.append(mark);
      a.append(spoken);
      spoken.classList.add("reader-progress");
    });
    var summary = document.querySelector(".reader-progress-summary");
    if (summary) {
      var all = records();
      var done = all.filter(function (r) { return r.done; }).length;
      summary.textContent = all.length
        ? "In this browser: " + done + " chapter" + (done === 1 ? "" : "s") +
          " done, " + (all.length - done) + " begun."
        : "";
    }
  }
  document.addEventListener("attn-quiz-progress", markChapters);
  window.addEventListener("storage", function (event) {
    if (!event.key || event.key.indexOf(STORE) === 0) markChapters();
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", markChapters);
  } else {
    markChapters();
  }

  // ---------------------------------------------------------------- heat maps
  function grid(map) {
    var g = (map.dataset.grid || "").split(" ").map(Number);
    // each value as the read-out shows it (book_support.figures.svg._cell_values)
    var values = (map.dataset.values || "").split(";").map(function (row) {
      return row.split(",");
    });
    return {
      left: g[0], top: g[1], cell: g[2], width: g[3], values: values,
      rows: (map.dataset.rows || "").split("|"), cols: (map.dataset.cols || "").split("|"),
    };
  }

  function show(map, i, j) {
    var g = grid(map);
    if (i < 0 || j < 0 || i >= g.values.length || j >= g.values[0].length) return;
    map.dataset.row = i;
    map.dataset.col = j;
    var mark = map.querySelector(".heatmap-mark");
    if (mark) {
      mark.setAttribute("x", g.left + j * g.cell);
      mark.setAttribute("y", g.top + i * g.cell);
      mark.setAttribute("visibility", "visible");
    }
    var text = map.querySelector(".heatmap-cell");
    if (!text) {
      text = document.createElement("p");
      text.className = "heatmap-cell";
      text.setAttribute("aria-live", "polite");
      map.append(text);
    }
    var v = g.values[i][j];
    var value = map.dataset.kind === "mask" ? (v === "1" ? "may attend" : "masked") : v;
    text.textContent = "query " + g.rows[i] + ", key " + g.cols[j] + ": " + value;
  }

  function cellAt(map, event) {
    var svg = map.querySelector("svg");
    var g = grid(map);
    var box = svg.getBoundingClientRect();
    var scale = box.width / g.width;
    var x = (event.clientX - box.left) / scale - g.left;
    var y = (event.clientY - box.top) / scale - g.top;
    return [Math.floor(y / g.cell), Math.floor(x / g.cell)];
  }

  document.addEventListener("pointermove", function (event) {
    var map = event.target.closest && event.target.closest(".explorer-heatmap");
    if (!map) return;
    var at = cellAt(map, event);
    var g = grid(map);
    if (at[0] >= 0 && at[1] >= 0 && at[0] < g.values.length && at[1] < g.values[0].length)
      show(map, at[0], at[1]);
  });
  document.addEventListener("focusin", function (event) {
    var map = event.target.closest && event.target.closest(".explorer-heatmap");
    if (map && event.target === map) {
      show(map, Number(map.dataset.row || 0), Number(map.dataset.col || 0));
    }
  });
  var STEPS = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
  document.addEventListener("keydown", function (event) {
    var map = event.target.closest && event.target.closest(".explorer-heatmap");
    var step = STEPS[event.key];
    if (!map || event.target !== map || !step) return;
    event.preventDefault();
    show(map, Number(map.dataset.row || 0) + step[0], Number(map.dataset.col || 0) + step[1]);
  });
})();
