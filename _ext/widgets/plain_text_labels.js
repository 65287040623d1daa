// Stands in for the npm package sanitize-html in the site's widget bundle
// (_ext/widgets/build.mjs). The widgets manager uses it only for labels that may hold
// HTML (description_allow_html), which no explorer of the book sets; such a label is
// then shown as plain text, escaped, which is safer than sanitised HTML. It keeps
// sanitize-html and what it brings (postcss, htmlparser2, dom-serializer, entities:
// about 0.24 MB of the 0.8 MB script) out of every page with an explorer.
export default function plainText(source) {
  const box = document.createElement("div");
  box.textContent = String(source);
  return box.innerHTML;
}
