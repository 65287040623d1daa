// Builds vendor/static-widgets/ for the website (`make assets`): static-widgets.js and .css
// from static_widgets.js, bundled and minified by esbuild, plus THIRD-PARTY.txt, which
// names every npm package in the bundle with its version and gives its licence text.
// Usage: node _ext/widgets/build.mjs OUT_DIR
import { build } from "esbuild";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) throw new Error("usage: node _ext/widgets/build.mjs OUT_DIR");

const result = await build({
  entryPoints: [join(here, "static_widgets.js")],
  outfile: join(out, "static-widgets.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2019",
  legalComments: "none",
  define: { "process.env.NODE_ENV": '"production"' },
  // labels as plain text: no HTML sanitiser in the bundle (see plain_text_labels.js)
  alias: { "sanitize-html": join(here, "plain_text_labels.js") },
  metafile: true,
  logLevel: "warning",
});

// The packages whose files are in the bundle: the folder after the last node_modules/
// in each input's path (node_modules/name/... or node_modules/@scope/name/...). Inputs
// named "(disabled):..." are modules a package's "browser" field leaves out: not bundled.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const at = input.lastIndexOf("node_modules/");
  if (at < 0 || input.startsWith("(disabled):")) continue;
  const parts = input.slice(at).split("/");
  const depth = parts[1].startsWith("@") ? 3 : 2;
  const folder = input.slice(0, at) + parts.slice(0, depth).join("/");
  const meta = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  const licence = readdirSync(folder).find((name) => /^licen[cs]e/i.test(name));
  packages.set(`${meta.name}@${meta.version}`, {
    licence: meta.license || "see the package",
    text: licence ? readFileSync(join(folder, licence), "utf8").trim()
      : `The npm package ships no licence file. Its package.json declares ${meta.license}; ` +
        `the licence text is in its repository, ${meta.repository?.url || meta.homepage}.`,
  });
}
const names = [...packages.keys()].sort();
writeFileSync(join(out, "THIRD-PARTY.txt"),
  "static-widgets.js and static-widgets.css bundle these npm packages (exact versions in\n" +
  "package-lock.json); their licences follow the list.\n\n" +
  names.map((name) => `${name}  ${packages.get(name).licence}`).join("\n") + "\n\n" +
  names.map((name) => `==== ${name}\n\n${packages.get(name).text}\n`).join("\n"));
console.log(`static-widgets: ${names.length} packages bundled into ${out}`);
