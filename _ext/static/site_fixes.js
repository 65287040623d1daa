// Accessibility fix (loaded on every page by _ext/site_fixes.py; checked by
// tests/browser/test_a11y.py): a code block or output that scrolls sideways must be reachable
// with the Tab key (WCAG 2.1.1). pydata-sphinx-theme gives such blocks a tab stop when the page
// loads, when the window is resized and when nodes are added, but not when a folded solution or
// a "show code" block is opened, which only changes a class or an attribute. This does the same
// after every click, key press and opened <details>.
(function () {
  "use strict";
  var selector = "pre, .cell_output > .output, .jp-RenderedHTMLCommon, " +
    ".pst-scrollable-table-container";
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
})();

// Slider handles are named by their labels in _config.yml's nb_ipywidgets_js script, which
// runs with the widgets (aria-labelledby and aria-valuetext).
