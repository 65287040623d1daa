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

// Accessibility fix: ipywidgets 8 draws a slider (IntSlider, FloatSlider, SelectionSlider, ...)
// as a noUiSlider handle with role="slider" next to a <label> that shows its description; a
// <label> cannot name a <div>, so the handle had no accessible name (axe-core's
// aria-input-field-name, WCAG 4.1.2). Each handle is named by the label it sits next to
// (aria-labelledby), as the ARIA slider pattern asks, once the widgets manager has drawn it.
(function () {
  "use strict";
  var counter = 0;
  function nameSliders() {
    document.querySelectorAll(".widget-slider [role=slider]:not([aria-labelledby])")
      .forEach(function (handle) {
        var widget = handle.closest(".widget-slider");
        var label = widget && widget.querySelector(":scope > label.widget-label");
        if (!label || !label.textContent.trim() || handle.hasAttribute("aria-label")) return;
        if (!label.id) label.id = "widget-slider-label-" + (++counter);
        handle.setAttribute("aria-labelledby", label.id);
      });
  }
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; nameSliders(); });
  }).observe(document.documentElement, {childList: true, subtree: true});
  nameSliders();
})();
