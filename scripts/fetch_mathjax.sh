#!/usr/bin/env bash
# Fetch MathJax 3 from the npm registry and install the minimum set of files the
# tex-chtml.js component needs to typeset offline into book/_mathjax/.
#
# Usage: scripts/fetch_mathjax.sh [DEST]   (DEST defaults to book/_mathjax)
#
# Idempotent: exits immediately when DEST/tex-chtml.js already exists.
# The tarball's sha512 is checked against the registry's dist.integrity.
set -euo pipefail

MATHJAX_VERSION="${MATHJAX_VERSION:-3.2.2}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/book/_mathjax}"

if [[ -f "$DEST/tex-chtml.js" ]]; then
    echo "fetch_mathjax: $DEST/tex-chtml.js already present, nothing to do"
    exit 0
fi

for tool in npm tar base64; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch_mathjax: ERROR: '$tool' not found" >&2; exit 1; }
done

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

expected="$(npm view "mathjax@${MATHJAX_VERSION}" dist.integrity)"
if [[ "$expected" != sha512-* ]]; then
    echo "fetch_mathjax: ERROR: unexpected integrity from registry: '$expected'" >&2
    exit 1
fi

(cd "$TMP" && npm pack --silent "mathjax@${MATHJAX_VERSION}" >/dev/null)
tarball="$TMP/mathjax-${MATHJAX_VERSION}.tgz"
if [[ ! -f "$tarball" ]]; then
    echo "fetch_mathjax: ERROR: npm pack did not produce $tarball" >&2
    exit 1
fi

if command -v openssl >/dev/null 2>&1; then
    actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
else
    actual="sha512-$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tarball")"
fi
if [[ "$actual" != "$expected" ]]; then
    echo "fetch_mathjax: ERROR: integrity mismatch for mathjax@${MATHJAX_VERSION}" >&2
    echo "  expected: $expected" >&2
    echo "  actual:   $actual" >&2
    exit 1
fi
echo "fetch_mathjax: integrity OK ($expected)"

tar -xzf "$tarball" -C "$TMP"
src="$TMP/package/es5"

stage="$TMP/stage"
mkdir -p "$stage/output/chtml/fonts" "$stage/input/tex"
cp "$src/tex-chtml.js" "$stage/"
cp -r "$src/output/chtml/fonts/woff-v2" "$stage/output/chtml/fonts/"
cp -r "$src/input/tex/extensions" "$stage/input/tex/"
cp -r "$src/ui" "$stage/"
cp -r "$src/a11y" "$stage/"
# MathJax is Apache-2.0: ship its licence alongside the redistributed files.
cp "$TMP/package/LICENSE" "$stage/mathjax-LICENSE.txt"

# Move into place only once complete, so an interrupted run is retried next time.
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv "$stage" "$DEST"

echo "fetch_mathjax: installed mathjax@${MATHJAX_VERSION} into $DEST ($(du -sh "$DEST" | cut -f1), $(find "$DEST" -type f | wc -l) files)"
