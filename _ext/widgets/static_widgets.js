// Draws the explorers' stored widget state on the static website: no kernel, no network.
//
// `jupyter execute` stores every widget's state in the notebook; myst-nb writes it into the
// page as <script type="application/vnd.jupyter.widget-state+json"> and one
// <script type="application/vnd.jupyter.widget-view+json"> where each explorer goes. This
// file does what the Jupyter widgets HTML manager's embed script does with them (create the
// models, then a view for each view tag), with the official packages
// (@jupyter-widgets/base-manager, base and controls, versions pinned in package-lock.json),
// but with only what the book's explorers use: the core widgets, no Output widget (which
// brings JupyterLab's renderers), no schema validation (which compiles a JSON schema at every
// page load), no Font Awesome and no RequireJS. That is a 0.8 MB script instead of 3.6 MB,
// and it draws as soon as the page is parsed instead of after the window's load event.
// A model class outside the two bundled modules is refused with an error that names it.
//
// Built by `make assets` with esbuild into vendor/static-widgets/ (a script and its style
// sheet); _config.yml loads it on the pages that hold widget state.
import { ManagerBase } from "@jupyter-widgets/base-manager";
import * as base from "@jupyter-widgets/base";
// Only the modules of @jupyter-widgets/controls that hold the explorers' widgets (its
// index would bring every widget: colour and date pickers, media, file upload, ...).
import { LinkModel } from "@jupyter-widgets/controls/lib/widget_link";
import { VBoxModel, VBoxView } from "@jupyter-widgets/controls/lib/widget_box";
import { DescriptionStyleModel } from "@jupyter-widgets/controls/lib/widget_description";
import { SliderStyleModel } from "@jupyter-widgets/controls/lib/widget_int";
import { HTMLModel, HTMLStyleModel, HTMLView } from "@jupyter-widgets/controls/lib/widget_string";
import {
  DropdownModel,
  DropdownView,
  SelectModel,
  SelectView,
  SelectionSliderModel,
  SelectionSliderView,
} from "@jupyter-widgets/controls/lib/widget_selection";
import { StackModel, StackView } from "@jupyter-widgets/controls/lib/widget_selectioncontainer";
import { Widget } from "@lumino/widgets";
import { MessageLoop } from "@lumino/messaging";
import "@lumino/widgets/style/index.css";
import "@jupyter-widgets/controls/css/widgets-base.css";
import "@jupyter-widgets/controls/css/labvariables.css";

const STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
const VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

// The explorers' sliders (ipywidgets' SelectionSlider), made for a reader:
// * the number beside the track is a read-out, not a field: ipywidgets makes it editable
//   (contenteditable), but typing into a SelectionSlider's read-out did nothing, it took
//   "abc" and went blank on blur, and it was a second Tab stop after every slider;
// * the handle (noUiSlider's role="slider") is named by the slider's visible label
//   (aria-labelledby) and says the option shown (aria-valuetext), not only its index.
let labelled = 0;
class ExplorerSliderView extends SelectionSliderView {
  update(options) {
    const result = super.update(options);
    this.readout.removeAttribute("contenteditable");
    this.nameHandle();
    return result;
  }

  updateReadout(index) {
    super.updateReadout(index);
    this.nameHandle();
  }

  nameHandle() {
    const handle = this.el.querySelector(".noUi-handle");
    if (!handle || !this.label) return;
    if (!this.label.id) this.label.id = `widget-label-${(labelled += 1)}`;
    handle.setAttribute("aria-labelledby", this.label.id);
    handle.setAttribute("aria-valuetext", this.readout.textContent.trim());
  }
}

const MODULES = {
  "@jupyter-widgets/base": base,
  "@jupyter-widgets/controls": {
    LinkModel,
    VBoxModel,
    VBoxView,
    DescriptionStyleModel,
    SliderStyleModel,
    HTMLModel,
    HTMLStyleModel,
    HTMLView,
    DropdownModel,
    DropdownView,
    SelectModel,
    SelectView,
    SelectionSliderModel,
    SelectionSliderView: ExplorerSliderView,
    StackModel,
    StackView,
  },
};

// TeX in the widgets' labels and HTML, typeset with MathJax 3. The widgets look for this
// typesetter on their manager (JupyterLab's managers provide one); without it they call
// MathJax 2's MathJax.Hub.Queue, which MathJax 3 lacks. Before MathJax has loaded there is
// nothing to do: its first typesetting of the page, which waits for the explorers
// (_config.yml), includes every element drawn by then.
const latexTypesetter = {
  typeset(element) {
    const mathJax = window.MathJax;
    if (!/\$|\\\(|\\\[|\\begin/.test(element.textContent || "")) return;
    if (mathJax && mathJax.startup && mathJax.startup.promise && mathJax.typesetPromise) {
      mathJax.startup.promise.then(() => mathJax.typesetPromise([element]));
    }
  },
};

class StaticManager extends ManagerBase {
  constructor() {
    super();
    this._rendermime = { latexTypesetter };
    this.views = new Set();
    window.addEventListener("resize", () => {
      this.views.forEach((view) => MessageLoop.postMessage(
        view.luminoWidget, Widget.ResizeMessage.UnknownSize));
    });
  }

  // The stored state names its classes by module; only these two modules are bundled.
  loadClass(className, moduleName, moduleVersion) {
    const module = MODULES[moduleName];
    if (module && module[className]) return Promise.resolve(module[className]);
    return Promise.reject(new Error(
      `${moduleName}@${moduleVersion} ${className} is not in the site's widget bundle`));
  }

  async display_view(view, element) {
    const shown = await view;
    Widget.attach(shown.luminoWidget, element);
    this.views.add(shown);
    shown.once("remove", () => this.views.delete(shown));
  }

  // A static page has no kernel: no comms exist, and none can be opened.
  _get_comm_info() {
    return Promise.resolve({});
  }

  _create_comm() {
    return Promise.resolve({ on_close() {}, on_msg() {}, close() {} });
  }
}

async function renderWidgets(root = document) {
  const stateTags = root.querySelectorAll(STATE);
  for (const stateTag of stateTags) {
    const manager = new StaticManager();
    const models = await manager.set_state(JSON.parse(stateTag.textContent));
    const byId = new Map(models.map((model) => [model.model_id, model]));
    await Promise.all(Array.from(root.querySelectorAll(VIEW), async (viewTag) => {
      const model = byId.get(JSON.parse(viewTag.textContent).model_id);
      if (model === undefined || viewTag.parentElement === null) return;
      const area = document.createElement("div");
      area.className = "widget-subarea";
      viewTag.parentElement.insertBefore(area, viewTag);
      await manager.display_view(manager.create_view(model), area);
    }));
  }
}

// Draw as soon as this deferred script runs (the page is parsed; MathJax and the theme's
// scripts come after it), then tell the page's inline script (_config.yml), which names
// the sliders for screen readers and lets MathJax typeset the page once they are drawn.
function start() {
  renderWidgets()
    .catch((error) => console.error("widgets not drawn:", error))
    .then(() => document.dispatchEvent(new Event("jupyter-widgets-drawn")));
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start);
} else {
  start();
}
