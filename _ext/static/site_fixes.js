// Accessibility fix (loaded on every page by _ext/site_fixes.py; checked by
// tests/browser/test_a11y.py): a code block or output that scrolls sideways must be reachable
// with the Tab key (WCAG 2.1.1). pydata-sphinx-theme gives such blocks a tab stop when the page
// loads, when the window is resized and when nodes are added, but not when a folded solution or
// a "show code" block is opened, which only changes a class or an attribute. This does the same
// after every click, key press and opened <details>.
(function () {
  "use strict";
  // (also display equations and explorer drawings, which scroll sideways when wider than
  // the column: _ext/static/reader.css)
  var selector = "pre, .cell_output > .output, .jp-RenderedHTMLCommon, " +
    ".pst-scrollable-table-container, mjx-container[display='true'], " +
    ".explorer-drawings > div";
  function update() {
    document.querySelectorAll(selector).forEach(function (el) {
      if (!el.getClientRects().length) return; // hidden: nothing to scroll yet
      var scrolls = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
      el.tabIndex = scrolls ? 0 : -1;
    });
  }
  function later() {
    window.requestAnimationFrame(function () { window.setTimeout(update, 50); });
  }
  document.addEventListener("click", later, true);
  document.addEventListener("keyup", later, true);
  document.addEventListener("toggle", later, true);
  // and once the explorers are drawn, once MathJax has typeset the page, and when the
  // window changes size
  document.addEventListener("jupyter-widgets-drawn", later);
  window.addEventListener("resize", later);
  document.addEventListener("DOMContentLoaded", function () {
    var mathJax = window.MathJax;
    if (mathJax && mathJax.startup && mathJax.startup.promise) {
      mathJax.startup.promise.then(later);
    }
    later();
  });
})();

// Slider handles are named by their labels in the widgets' script
// (_ext/widgets/static_widgets.js: aria-labelledby and aria-valuetext).
