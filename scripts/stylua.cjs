// Runs StyLua (the npm package's WebAssembly build, so no prebuilt binary is
// downloaded) over Fido's Lua files with the settings in stylua.toml.
//   node scripts/stylua.cjs --check   lists files that would change, exits 1
//   node scripts/stylua.cjs           rewrites them
// STYLUA_MODULE names the installed @johnnymorganz/stylua package directory.
"use strict";
const fs = require("fs");
const path = require("path");

const root = path.resolve(__dirname, "..");
const mod = process.env.STYLUA_MODULE;
if (!mod) {
  console.error("stylua: set STYLUA_MODULE to an installed @johnnymorganz/stylua (scripts/ensure-tools does)");
  process.exit(2);
}
const stylua = require(path.join(mod, "stylua_lib_node.cjs"));

// readSettings parses the flat key = value lines of stylua.toml.
function readSettings() {
  const out = {};
  const text = fs.readFileSync(path.join(root, "stylua.toml"), "utf8");
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const m = line.match(/^(\w+)\s*=\s*(.+)$/);
    if (!m) throw new Error(`stylua.toml: cannot read line: ${raw}`);
    out[m[1]] = m[2].startsWith('"') ? JSON.parse(m[2]) : Number(m[2]);
  }
  return out;
}

function config(s) {
  const c = stylua.Config.new();
  const enums = {
    line_endings: stylua.LineEndings,
    indent_type: stylua.IndentType,
    quote_style: stylua.QuoteStyle,
    call_parentheses: stylua.CallParenType,
  };
  for (const [k, v] of Object.entries(s)) {
    if (enums[k]) {
      if (!(v in enums[k])) throw new Error(`stylua.toml: ${k} = ${v} is not one of ${Object.keys(enums[k]).join(", ")}`);
      c[k] = enums[k][v];
    } else {
      c[k] = v;
    }
  }
  return c;
}

function luaFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...luaFiles(p));
    else if (e.name.endsWith(".lua")) out.push(p);
  }
  return out;
}

const check = process.argv.includes("--check");
const settings = readSettings();
let bad = 0;
for (const f of ["lua", "plugin"].flatMap((d) => luaFiles(path.join(root, d))).sort()) {
  const src = fs.readFileSync(f, "utf8");
  let out;
  try {
    // formatCode takes ownership of its Config: a fresh one per file.
    out = stylua.formatCode(src, config(settings), undefined, stylua.OutputVerification.Full);
  } catch (e) {
    console.error(`${path.relative(root, f)}: ${e}`);
    bad++;
    continue;
  }
  if (out === src) continue;
  bad++;
  if (check) console.log(`would reformat ${path.relative(root, f)}`);
  else fs.writeFileSync(f, out);
}
if (check && bad) {
  console.log(`stylua: ${bad} file(s) not formatted; run: make fmt-lua`);
  process.exit(1);
}
