// Live code: the chapter's code cells become editable and run in the page, by Python in
// the reader's browser (Pyodide in a Web Worker: worker.mjs), offline. Until the reader
// first presses "Make this page live", this script only adds that control: Python and
// the chapter's cells load on demand (after that, live code stays on: see KEEP below).
// One Python per page; cells share its state and run in order, as in Jupyter: running a
// cell first runs the cells above it that have not run yet. Outputs replace the stored
// ones under each cell. Built by `make live` (_ext/live/build_live.py); the page's
// <meta name="attn-live"> says what to load.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="attn-live"]');
  if (!meta || !document.currentScript) return;
  var info = JSON.parse(meta.content);
  var base = new URL("./", document.currentScript.src).href;
  var WIDGET = "application/vnd.jupyter.widget-view+json";
  var banner, statusLine, startButton, restartButton;
  var worker = null, ready = null, cells = null, queue = Promise.resolve();
  var pending = {}, nextId = 1, started = 0, timer = null;
  // performance.now() of: the click on "Make this page live", Python ready, the first
  // output of any cell, the first figure (read by the tests and `make bench-pages`)
  var times = {};
  var restored = null; // whether Python started from the memory snapshot (boot.mjs)
  var unpackedHere = null; // images the worker unpacked itself, not its helper (unpack.mjs)
  // A reader who made a page live keeps live code on (this site's localStorage, in
  // this browser): later pages, in this visit or a later one, start Python while the
  // reader reads, and their button then only turns the cells into editors. Only from
  // what the browser kept: if any file Python starts from is not in the site's Cache
  // Storage (a new build, storage cleared, no Cache Storage), the worker says so and
  // the page waits for the click as on a first visit (worker.mjs, "early"). Only in a
  // tab the reader can see. "Stop starting Python on each page" turns it off. A first
  // visit loads nothing before the click.
  var KEEP = "attn-live-on";
  var early = null; // the cells fetched while Python started before the click
  var warmed = false; // this worker was sent the cells' imports
  var startSeconds = 0; // how long Python took to start
  var failed = false; // this worker's start failed (the button then starts another)

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) node.textContent = text;
    return node;
  }

  function say(text) { statusLine.textContent = text; }

  function buildBanner() {
    var article = document.querySelector("article.bd-article") || document.querySelector("main");
    if (!article) return;
    banner = el("section", { "class": "live-banner", "aria-label": "Live code", "tabindex": "-1" });
    var title = el("p", { "class": "live-title" });
    title.appendChild(el("strong", {}, "Run this page's code in your browser. "));
    if (info.available) {
      title.appendChild(document.createTextNode(
        "Python " + info.python.split(".").slice(0, 2).join(".") + " starts inside this " +
        "page, with no server running your code: every code cell becomes editable, " +
        "and its output appears under it. It loads about " + info.megabytes + " MB; " +
        "on a 2-core computer the first output usually comes within " +
        info.first_seconds + " s, sooner on a fast one."));
      startButton = el("button", { "type": "button", "class": "live-start" }, "Make this page live");
      startButton.addEventListener("click", start);
    } else {
      title.appendChild(document.createTextNode(
        "Live code is not in this build of the site (" + info.reason.split("\n")[0] +
        "). The outputs shown are the book's; for a full Jupyter, use Binder in the " +
        "launch menu (it needs a network)."));
    }
    banner.appendChild(title);
    if (startButton) banner.appendChild(startButton);
    statusLine = el("p", { "class": "live-status", "role": "status", "aria-live": "polite" });
    banner.appendChild(statusLine);
    var heading = article.querySelector("h1");
    if (heading && heading.parentNode) heading.parentNode.insertBefore(banner, heading.nextSibling);
    else article.insertBefore(banner, article.firstChild);
    // (no DecompressionStream: Python cannot start here, so not before the click)
    if (info.available && kept() && typeof DecompressionStream !== "undefined") {
      whenVisible(startEarly);
    }
  }

  // Run `then` once this tab is visible (at once if it is).
  function whenVisible(then) {
    if (document.visibilityState !== "hidden") return then();
    document.addEventListener("visibilitychange", function once() {
      if (document.visibilityState === "hidden") return;
      document.removeEventListener("visibilitychange", once);
      if (!worker && !cells && kept()) then();
    });
  }

  function kept() {
    try { return localStorage.getItem(KEEP) === "1"; } catch (e) { return false; }
  }

  function keep(on) {
    try {
      if (on) localStorage.setItem(KEEP, "1");
      else localStorage.removeItem(KEEP);
    } catch (e) { /* storage blocked: live code stays per page */ }
  }

  // Live code is on in this browser: start Python and fetch the cells now, before the
  // click; the page stays as it is until the reader presses the button.
  function startEarly() {
    bootWorker(true);
    early = fetch(base + "cells/" + info.page + ".json").then(function (r) { return r.json(); });
    early.then(function (data) { warm(data.cells); }).catch(function () {});
    var why = el("p", { "class": "live-early" }, "You made a page of this book live " +
      "before, so Python is starting here too, from what this browser kept (nothing " +
      "is downloaded again); the page changes only when you press the button.");
    var off = el("button", { "type": "button", "class": "live-off" },
      "Stop starting Python on each page");
    off.addEventListener("click", function () {
      keep(false);
      dropEarly();
      say("Python stopped. Live code is off until you make a page live again.");
    });
    banner.insertBefore(why, statusLine);
    banner.insertBefore(off, statusLine);
  }

  // Forget a start made before the click (stopped, or not possible from the kept files).
  function dropEarly() {
    if (worker) worker.terminate();
    worker = null;
    ready = null;
    early = null;
    stopTimer();
    times = {};
    removeEarlyNotes();
  }

  // The banner's note that Python started before the click, and its "Stop" button.
  function removeEarlyNotes() {
    [".live-off", ".live-early"].forEach(function (selector) {
      var node = banner.querySelector(selector);
      if (node) node.remove();
    });
  }

  // --- Python --------------------------------------------------------------------------
  // beforeClick: started before the click, only from the files the browser kept
  function bootWorker(beforeClick) {
    worker = new Worker(base + "worker.mjs", { type: "module" });
    warmed = false;
    failed = false;
    started = performance.now();
    ready = new Promise(function (resolve, reject) {
      worker.onmessage = function (event) {
        var m = event.data;
        if (m.type === "progress") {
          // when each stage of the start began (the worker's clock, in the page's)
          if (m.at) times["start_" + m.step] = m.at - performance.timeOrigin;
          say(m.text + "…");
        }
        else if (m.type === "ready") {
          stopTimer();
          times.ready = performance.now();
          restored = m.restored;
          unpackedHere = m.unpackedHere;
          resolve();
          startSeconds = m.seconds;
          if (times.click === undefined) say("Python is ready (it started in " +
              m.seconds.toFixed(1) + " s): \u201cMake this page live\u201d turns the " +
              "cells into editors at once.");
          else sayReady();
        } else if (m.type === "not-kept") {
          // some file is not in the browser's storage: Python starts on the click, as
          // on a first visit; at once if the reader has clicked already (the old
          // promise then follows the new start, so runs already asked for go on)
          var clicked = times.click;
          dropEarly();
          if (clicked === undefined) {
            say("");
            reject(new Error("not kept"));
          } else {
            times.click = clicked;
            say("Loading Python (about " + info.megabytes + " MB)…");
            bootWorker();
            resolve(ready);
          }
        } else if (m.type === "failed") {
          stopTimer();
          failed = true;
          // a start the reader did not ask for ends quietly: the click starts anew
          if (beforeClick && times.click === undefined) { dropEarly(); say(""); }
          else say("Python could not start: " + m.error);
          reject(new Error(m.error));
        } else if (m.type === "output" && pending[m.id]) pending[m.id].output(m.message);
        else if (m.type === "done" && pending[m.id]) {
          pending[m.id].done(m.ok);
          delete pending[m.id];
        }
      };
      worker.onerror = function (event) {
        stopTimer();
        failed = true;
        say("Python could not start: " + (event.message || "the worker failed to load"));
        reject(new Error(event.message));
      };
    });
    ready.catch(function () {});
    var label = "";
    timer = setInterval(function () {
      var s = ((performance.now() - started) / 1000).toFixed(0);
      label = statusLine.textContent.replace(/ \(\d+ s\)$/, "");
      statusLine.textContent = label + " (" + s + " s)";
    }, 1000);
    worker.postMessage({
      type: "boot", folder: info.page.replace(/\/[^\/]*$/, ""), early: !!beforeClick });
    if (cells) warm(cells);
  }

  // The worker imports what the cells import as soon as Python is ready.
  function warm(list) {
    if (warmed || !worker) return;
    warmed = true;
    worker.postMessage({ type: "warm", sources: list.map(function (cell) {
      return cell.runnable ? cell.source : cell.prelude || "";
    }) });
  }

  function sayReady() {
    say("Python is ready (it started in " + startSeconds.toFixed(1) + " s). Run a cell " +
        "with its Run button or Shift+Enter; the cells above it run first.");
  }

  function stopTimer() { if (timer) clearInterval(timer); timer = null; }

  function execute(code, sink) {
    return ready.then(function () {
      return new Promise(function (resolve) {
        var id = nextId++;
        pending[id] = { output: sink, done: resolve };
        worker.postMessage({ type: "run", id: id, code: code });
      });
    });
  }

  // --- cells ---------------------------------------------------------------------------
  function start() {
    if (cells || (worker && !early)) return;
    if (worker && failed) dropEarly(); // a start before the click failed: try again
    times.click = performance.now();
    keep(true);
    startButton.disabled = true;
    removeEarlyNotes();
    var loaded = early;
    if (!worker) {
      say("Loading Python (about " + info.megabytes + " MB)…");
      bootWorker();
      loaded = fetch(base + "cells/" + info.page + ".json").then(function (r) { return r.json(); });
    }
    else if (times.ready !== undefined) sayReady(); // Python started before the click
    early = null;
    loaded
      .then(function (data) { setUpCells(data.cells); })
      .catch(function (error) { say("The page's cells could not be loaded: " + error); });
    restartButton = el("button", { "type": "button", "class": "live-restart" }, "Restart Python");
    restartButton.addEventListener("click", restart);
    banner.insertBefore(restartButton, statusLine);
    startButton.remove();
  }

  function restart() {
    Object.keys(pending).forEach(function (id) { pending[id].done(false); });
    pending = {};
    worker.terminate();
    (cells || []).forEach(function (cell) { cell.ran = false; setState(cell, ""); });
    queue = Promise.resolve();
    say("Restarting Python…");
    bootWorker();
  }

  function setUpCells(list) {
    cells = list;
    warm(cells);
    cells.forEach(function (cell, position) {
      cell.position = position;
      cell.ran = false;
      cell.quiz = cell.tags.indexOf("quiz") >= 0;
      cell.node = document.querySelector(".live-cell-" + cell.index);
      if (!cell.node) return;
      cell.widget = !!cell.node.querySelector('script[type="' + WIDGET + '"]');
      var input = cell.node.querySelector(".cell_input");
      cell.bar = el("div", { "class": "live-bar" });
      cell.state = el("span", { "class": "live-state", "role": "status" });
      if (!cell.runnable) {
        cell.bar.appendChild(el("span", { "class": "live-note" },
          "This cell cannot run in the page: it " + cell.reason + ". Its output is the " +
          "one stored in the book; the notebook runs it in full on Binder or your machine."));
      } else if (input) {
        var highlight = input.querySelector("div.highlight") || input.querySelector("pre");
        cell.editor = el("textarea", {
          "class": "live-editor", "spellcheck": "false", "autocapitalize": "off",
          "aria-label": "Code of this cell (Shift+Enter runs it)"
        });
        cell.editor.value = cell.source;
        cell.editor.addEventListener("input", function () { fit(cell.editor); });
        cell.editor.addEventListener("keydown", function (event) {
          if (event.key === "Enter" && event.shiftKey) {
            event.preventDefault();
            run(cell);
          }
        });
        if (highlight) {
          highlight.parentNode.insertBefore(cell.editor, highlight);
          highlight.hidden = true;
        } else input.appendChild(cell.editor);
        fit(cell.editor);
        var button = el("button", { "type": "button", "class": "live-run" }, "Run");
        button.setAttribute("aria-label", "Run this cell");
        button.addEventListener("click", function () { run(cell); });
        cell.bar.appendChild(button);
      }
      cell.bar.appendChild(cell.state);
      if (input) input.appendChild(cell.bar);
      else cell.node.insertBefore(cell.bar, cell.node.firstChild);
    });
  }

  // As tall as its code (by lines: the editor may sit in a folded "Show code" block,
  // where it has no height to measure).
  function fit(editor) {
    editor.rows = Math.max(2, editor.value.split("\n").length);
  }

  function setState(cell, text) { if (cell.state) cell.state.textContent = text; }

  // Run every cell above that has not run yet, then this one.
  function run(cell) {
    queue = queue.then(function () {
      var chain = Promise.resolve();
      cells.slice(0, cell.position).forEach(function (before) {
        if (!before.ran) chain = chain.then(function () { return runOne(before); });
      });
      return chain.then(function () { return runOne(cell); });
    });
    return queue;
  }

  function runOne(cell) {
    var code = cell.runnable ? (cell.editor ? cell.editor.value : cell.source) : cell.prelude;
    // Outputs replace the stored ones, except where the stored output is the page's own
    // control (self-check questions, precomputed explorers) or the cell cannot run.
    var replace = cell.runnable && !cell.quiz && !cell.widget && cell.node;
    var area = replace ? outputArea(cell) : null;
    var alts = area ? Array.prototype.map.call(area.querySelectorAll("img"),
      function (img) { return img.alt; }) : [];
    if (area) area.innerHTML = "";
    var extra = cell.widget && cell.runnable ? widgetNote(cell) : null;
    setState(cell, "running…");
    cell.ran = true;
    if (!code.trim()) { setState(cell, ""); return Promise.resolve(true); }
    var t0 = performance.now();
    cell.messages = [];
    return execute(code, function (message) {
      cell.messages.push(message);
      if (times.output === undefined) times.output = performance.now();
      if (times.figure === undefined && message.data && message.data["image/png"]) {
        times.figure = performance.now();
      }
      if (area) render(area, message, alts);
      else if (extra && message.type !== "display" && message.type !== "result") render(extra, message, alts);
    }).then(function (ok) {
      var s = ((performance.now() - t0) / 1000).toFixed(1);
      setState(cell, ok ? "ran in " + s + " s" : "stopped with an error (" + s + " s)");
      if (cell.node) cell.node.setAttribute("data-live-ran", ok ? "ok" : "error");
      return ok;
    });
  }

  function outputArea(cell) {
    var area = cell.node.querySelector(".cell_output");
    if (!area) {
      area = el("div", { "class": "cell_output docutils container" });
      cell.node.appendChild(area);
    }
    area.classList.add("live-output");
    return area;
  }

  function widgetNote(cell) {
    var box = cell.node.querySelector(".live-widget-note");
    if (!box) {
      box = el("div", { "class": "live-widget-note" });
      box.appendChild(el("p", {}, "The explorer here stays the one the book stored: " +
        "its controls move through every computed position. Free sliders, computed by " +
        "Python as you drag, need Jupyter's widget manager, which this page does not " +
        "run; open the chapter on Binder or your machine for them. Text this cell " +
        "prints appears below."));
      outputAreaAfter(cell).appendChild(box);
    }
    var out = el("div", { "class": "live-output" });
    box.appendChild(out);
    return out;
  }

  function outputAreaAfter(cell) {
    return cell.node.querySelector(".cell_output") || cell.node;
  }

  function render(area, message, alts) {
    if (message.type === "stream") {
      var last = area.lastElementChild;
      if (last && last.getAttribute("data-stream") === message.name) {
        last.querySelector("pre").textContent += message.text;
        return;
      }
      var box = el("div", { "class": "output stream live-" + message.name, "data-stream": message.name });
      box.appendChild(el("pre", {}, message.text));
      area.appendChild(box);
    } else if (message.type === "display" || message.type === "result") {
      area.appendChild(bundle(message.data, alts));
    } else if (message.type === "error") {
      var err = el("div", { "class": "output traceback live-error" });
      var text = message.traceback.length ? message.traceback.join("\n")
        : message.ename + ": " + message.evalue;
      err.appendChild(el("pre", {}, text));
      area.appendChild(err);
    } else if (message.type === "clear") {
      area.innerHTML = "";
    }
  }

  function bundle(data, alts) {
    var box;
    if (data[WIDGET]) {
      box = el("div", { "class": "output text_plain" });
      box.appendChild(el("pre", {}, "A widget (" + (data["text/plain"] || "") + "): this page " +
        "cannot draw widgets; the explorer above shows the same quantities."));
    } else if (data["text/html"]) {
      box = el("div", { "class": "output text_html" });
      box.innerHTML = data["text/html"];
    } else if (data["image/png"]) {
      box = el("div", { "class": "output image_png" });
      box.appendChild(el("img", {
        "src": "data:image/png;base64," + data["image/png"],
        "alt": alts.shift() || "Figure drawn in your browser by this cell"
      }));
    } else if (data["image/svg+xml"]) {
      box = el("div", { "class": "output image_svg" });
      box.innerHTML = data["image/svg+xml"];
    } else {
      box = el("div", { "class": "output text_plain" });
      box.appendChild(el("pre", {}, data["text/plain"] || ""));
    }
    return box;
  }

  // --- the reader's own sentence (book_support.figures.explorers.minilm) -------------
  // The form is in the page as stored (OwnSentenceForm); its button makes the page live
  // if it is not, then asks the page's Python for the maps of the typed sentence. The
  // answer is HTML made by show_own_sentence, which escapes the reader's text; the
  // sentence reaches Python as a JSON string literal, which Python reads as the same
  // str literal, never as code.
  var ownRequest = 0;

  function ownPart(form, name) { return form.querySelector(".own-sentence-" + name); }

  // pick: the overview's button the reader pressed (its new copy gets the focus back)
  function ownShow(form, pick) {
    var status = ownPart(form, "status"), result = ownPart(form, "result");
    if (!info.available) {
      status.textContent = "This build of the site has no live code (" +
        info.reason.split("\n")[0] + "): the model cannot run in the page.";
      return;
    }
    var text = ownPart(form, "text").querySelector("input").value;
    var layer = parseInt(ownPart(form, "layer").querySelector("select").value, 10);
    var head = parseInt(ownPart(form, "head").querySelector("select").value, 10);
    var request = ++ownRequest;
    var first = !cells;
    var begun = first && worker && early; // Python started before the click
    if (first) start();
    form.setAttribute("aria-busy", "true");
    var thenModel = ", then the model (its weights, about " + info.model_megabytes +
      " MB, load once)…";
    status.textContent = !first ? "Running the model on your sentence…"
      : begun ? "Starting Python in this page from what this browser kept" + thenModel
      : "Starting Python in this page (about " + info.megabytes + " MB)" + thenModel;
    var html = null, problem = "";
    var code = "from book_support.figures.explorers.minilm import show_own_sentence\n" +
      "show_own_sentence(" + JSON.stringify(text) + ", " + layer + ", " + head + ")";
    execute(code, function (m) {
      if (m.type === "display" && m.data && m.data["text/html"]) html = m.data["text/html"];
      else if (m.type === "stream" && m.name === "stderr" && request === ownRequest) {
        status.textContent = m.text.trim();
      } else if (m.type === "error") problem = m.ename + ": " + m.evalue;
    }).then(function (ok) {
      if (request !== ownRequest) return;
      form.removeAttribute("aria-busy");
      if (ok && html !== null) {
        result.innerHTML = html;
        if (pick) {
          var again = result.querySelector(".own-sentence-pick[aria-pressed='true']");
          if (again) again.focus();
        }
        var message = result.querySelector(".own-sentence-message");
        status.textContent = message ? "" : "Layer " + layer + ", head " + head +
          " of the model on your sentence (hover over a map, or focus it and use " +
          "the arrow keys, to read its values).";
        form.setAttribute("data-shown", message ? "message" : "maps");
      } else {
        status.textContent = "The model could not run: " + (problem || "no answer");
        form.setAttribute("data-shown", "error");
      }
    }, function (error) {
      if (request !== ownRequest) return;
      form.removeAttribute("aria-busy");
      status.textContent = "Python could not start: " + error.message;
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".own-sentence-show");
    if (button) ownShow(button.closest(".own-sentence"));
    // a small map of the overview: show that layer and head in the maps above
    var pick = event.target.closest && event.target.closest(".own-sentence-pick");
    if (pick) {
      var form = pick.closest(".own-sentence");
      // the sentence the small maps show, even if the text box has changed since
      var shown = pick.closest(".own-sentence-heads").getAttribute("data-sentence");
      if (shown !== null) ownPart(form, "text").querySelector("input").value = shown;
      ownPart(form, "layer").querySelector("select").value = pick.getAttribute("data-layer");
      ownPart(form, "head").querySelector("select").value = pick.getAttribute("data-head");
      ownShow(form, true);
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !event.target.closest) return;
    var box = event.target.closest(".own-sentence-text");
    if (box) { event.preventDefault(); ownShow(box.closest(".own-sentence")); }
  });
  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest(".own-sentence");
    if (!form || event.target.tagName !== "SELECT") return;
    if (event.target.closest(".own-sentence-example")) {
      ownPart(form, "text").querySelector("input").value = event.target.value;
    }
    // once the reader has asked for maps, a new choice shows its maps at once
    if (form.hasAttribute("data-shown")) ownShow(form);
  });

  // The launch menu's "Live code" entry, and the tests' handle.
  window.attnLive = {
    open: function () {
      if (!banner) return;
      banner.scrollIntoView({ block: "center" });
      if (!cells && info.available) start();
      banner.focus();
    },
    runAll: function () { return cells && cells.length ? run(cells[cells.length - 1]) : Promise.resolve(); },
    ready: function () { return ready; },
    cells: function () { return cells; },
    run: function (position) { return run(cells[position]); },
    times: function () { return times; },
    restored: function () { return restored; },
    unpackedHere: function () { return unpackedHere; },
    // the messages of one piece of code run in the page's Python (the tests' handle)
    python: function (code) {
      var messages = [];
      return execute(code, function (m) { messages.push(m); })
        .then(function () { return messages; });
    },
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", buildBanner);
  else buildBanner();
})();
