# Two commands for a fresh machine (python3 and make): `make book` and `make test`.
# Everything is installed into .venv from requirements.txt; nothing is assumed installed by hand.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JB_STRICT := -W -n --keep-going
NOTEBOOKS := $(sort $(shell find chapters -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*'))
NBVAL := $(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	-p no:cacheprovider -n 2 --dist loadfile
# Assets the website serves itself (no CDN): MathJax and the script that draws the explorers'
# widget state (built by esbuild from _ext/widgets/ with the Jupyter widgets packages), pinned
# in package.json/package-lock.json and put into a folder that Sphinx copies to the site root
# (html_extra_path in _config.yml), NOT into _static/.
ASSETS := _site_assets/vendor
ASSETS_STAMP := $(ASSETS)/README.txt
WIDGETS_SRC := _ext/widgets/static_widgets.js _ext/widgets/build.mjs _ext/widgets/plain_text_labels.js
# The fresh-environment check (what Binder does): a new venv from requirements.txt + postBuild.
BINDER_VENV ?= /tmp/attention-executable-binder-check
# Only for `make lab` (reading the notebooks locally); the book and the tests do not need it.
JUPYTERLAB := jupyterlab==4.6.6

# One thread of linear algebra per process in the tests. They already run as several
# processes beside the build and the browser; numpy's OpenBLAS (and PyTorch) would start
# a thread per core in each, and threads that outnumber the cores spin while they wait
# (measured: `make test` took 1,381 s of processor time with them, 1,173 s without).
TEST_TARGETS := check test test-all test-code test-site test-unit test-notebooks \
	test-build test-browser binder-check
$(TEST_TARGETS): export OMP_NUM_THREADS := 1
$(TEST_TARGETS): export OPENBLAS_NUM_THREADS := 1
$(TEST_TARGETS): export MKL_NUM_THREADS := 1
# Python keeps the bytecode of the book's modules and pytest its rewritten test modules
# (in __pycache__), so that the many processes of a run (test workers, notebook kernels,
# the page's Python's reference) compile them once: some machines set
# PYTHONDONTWRITEBYTECODE (measured: collecting the unit tests took 10.4 s of processor
# time with it, 5.6 s without).
$(TEST_TARGETS): export PYTHONDONTWRITEBYTECODE :=

.PHONY: install assets live book check test test-all lint test-unit test-notebooks test-build \
	test-browser chromium binder-check lab execute serve clean bench train

install: $(STAMP)

# Built the way Binder builds its image: requirements.txt, then postBuild (which installs the
# pretrained model). On a fresh clone, `make test` therefore checks Binder's environment too.
$(STAMP): requirements.txt requirements-torch.txt pyproject.toml postBuild
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -r requirements.txt
	PATH="$(abspath $(BIN)):$$PATH" ./postBuild
	# PyTorch (CPU build), for the tests that compare attnlib with it; not for Binder
	$(BIN)/python -m pip install -r requirements-torch.txt
	touch $(STAMP)

## assets: fetch the offline assets of the website (npm ci; exact versions in package-lock.json)
assets: $(ASSETS_STAMP)

$(ASSETS_STAMP): package.json package-lock.json $(WIDGETS_SRC)
	npm ci --ignore-scripts --no-audit --no-fund
	rm -rf $(ASSETS)
	mkdir -p $(ASSETS)/axe-core
	cp -R node_modules/mathjax/es5 $(ASSETS)/mathjax
	cp node_modules/mathjax/LICENSE $(ASSETS)/mathjax/
	cp node_modules/axe-core/axe.min.js node_modules/axe-core/LICENSE $(ASSETS)/axe-core/
	node _ext/widgets/build.mjs $(ASSETS)/static-widgets
	printf '%s\n' "Copied or built by 'make assets' from the npm packages pinned in package-lock.json:" \
		"mathjax $$(node -p 'require("./node_modules/mathjax/package.json").version')," \
		"axe-core $$(node -p 'require("./node_modules/axe-core/package.json").version') (accessibility tests only)," \
		"static-widgets/ (see its THIRD-PARTY.txt)." > $@

## live: live code, Python in the page (Pyodide, offline): the runtime from npm, the
## wheels the chapters import (sha256 checked against Pyodide's lock file), attnlib and the
## chapters' data, matplotlib's font list, the page's scripts, into _site_assets/live
## (_ext/live/build_live.py). Without the wheels, the site is built without live code and
## says so; `make test` then fails.
LIVE_STAMP := _site_assets/live/manifest.json
LIVE_SRC := $(wildcard _ext/live/*) $(shell find attnlib chapters -type f -not -name '*.pyc')
live: $(LIVE_STAMP)

$(LIVE_STAMP): $(STAMP) $(ASSETS_STAMP) $(LIVE_SRC)
	$(BIN)/python _ext/live/build_live.py

## book: install everything and build the website (strict: zero warnings)
book: install assets live
	$(BIN)/jupyter-book build . $(JB_STRICT)
	@echo "The book is at: $(abspath _build/html/index.html)"

## Three tiers of tests (README, "Testing"):
##   make check     the loop after each edit, under a minute: lint, attnlib's core and
##                  layers unit tests, the softmax chapter under nbval
##   make test      what CI runs on every push and pull request (.ci/run), within 10
##                  minutes on 2 idle cores: lint, every unit test, every chapter under
##                  nbval, the strict build, the browser tests where they can fail
##                  (BROWSER_MATRIX=tiered, tests/browser/sitepages.py)
##   make test-all  nightly: `make test` with every page in every reader profile and
##                  live code in every chapter (BROWSER_MATRIX=full), then the PDF
##                  (`make pdf`, built and checked) and `make binder-check`

## check: ruff, the unit tests of attnlib's core and layers, and one chapter under nbval,
## in one pytest run on two workers
CHECK_TESTS := $(addprefix tests/,test_attention.py test_softmax.py test_scores.py \
	test_masks.py test_heads.py test_scaling.py test_backward.py test_dropout.py \
	test_grouped_query.py test_contract_core.py test_layers.py \
	test_layer_norm_feed_forward.py test_layers_contract.py test_positional_encoding.py)
CHECK_NOTEBOOK := chapters/how_attention_works/softmax/softmax.ipynb
check: install lint
	$(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-p no:cacheprovider -n 2 --dist loadfile -q $(CHECK_TESTS) $(CHECK_NOTEBOOK)

## test: after the lint, two lines of work run side by side (make -j2), one for each
## core: attnlib's unit tests, then every notebook under nbval; and the strict build,
## then the browser tests. The browser tests wait on the browser more than they
## compute, so the two lines share the two cores well. Each part's output is printed
## whole when it ends (make -O); any failure fails `make test`.
test: install lint
	$(MAKE) --no-print-directory -j2 -Otarget test-code test-site

## test-all: `make test` with the full browser matrix and the exhaustive unit tests (those
## marked `nightly`; `make test` runs a sampled check of the same property), then the PDF
## and the Binder check
test-all: install
	$(MAKE) --no-print-directory test TIER=all
	$(MAKE) --no-print-directory pdf
	$(MAKE) --no-print-directory binder-check

.PHONY: test-code test-site
test-code: install
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-notebooks

test-site: install
	$(MAKE) --no-print-directory test-browser

## lint: ruff (configured in pyproject.toml): lint attnlib/, tests/, tools/, _ext/ and the
## chapters' code cells; check the formatting of the Python files (not of the notebooks)
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# TIER=all (make test-all) also runs the unit tests marked `nightly` (pyproject.toml)
TIER ?= test
UNIT_SELECT := $(if $(filter all,$(TIER)),,-m "not nightly")
# the slowest unit tests are listed at the end (where the time goes)
test-unit: install
	$(BIN)/pytest tests -n 2 --ignore=tests/browser --durations=15 $(UNIT_SELECT)

test-notebooks: install
	$(NBVAL) $(NOTEBOOKS)

test-build: install assets live
	$(BIN)/jupyter-book build . --all $(JB_STRICT)

## test-browser: build, then Chromium (Playwright, network blocked) visits the pages of
## _build/html in four reader profiles (a 390 px phone with touch and a 1280 px desktop,
## light and dark mode); screenshots go to _build/screenshots/. On those visits:
## accessibility (tests/browser/test_a11y.py: axe-core WCAG 2.1 A/AA, alt text, heading
## order, keyboard), what a reader meets (test_reader.py: contrast from the rendered
## colours, widths, slider tracks, the Tab path, the drawer, answers kept), the
## self-check questions and the explorers; also internal links and the pages' HTML.
## BROWSER_MATRIX=tiered (make test): colour checks in light and dark on the desktop,
## layout checks on the phone and the desktop in light mode, every profile on one
## chapter of each part, live code in the browser in one chapter (every chapter's
## exercises under Node), the questions answered on one chapter of each part.
## BROWSER_MATRIX=full (make test-all): every page in every profile, live code and the
## questions in every chapter.
# Browsers that wait (for a page, a transition, Python in the page) leave the cores free:
# three workers on two cores.
BROWSER_WORKERS ?= 3
BROWSER_MATRIX ?= $(if $(filter all,$(TIER)),full,tiered)
test-browser: install chromium test-build
	BROWSER_MATRIX=$(BROWSER_MATRIX) $(BIN)/pytest tests/browser -p no:cacheprovider \
		-n $(BROWSER_WORKERS) --dist loadgroup

## chromium: Debian's browser for the browser tests (Playwright never downloads its own)
chromium:
	@command -v chromium >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && $$SUDO apt-get install -y chromium; }

## pdf: the PDF edition of the whole book, _build/pdf/attention-executable.pdf: Debian's Chromium
## prints every page of the built site in reading order (offline), pypdf adds a title page,
## contents with page numbers and bookmarks (tools/build_pdf.py); then its test. Part of
## `make test-all` (nightly), not of `make test` (it takes minutes).
.PHONY: pdf test-pdf poppler
# The site is built with ATTENTION_PDF_EDITION=1, so that its pages link to the PDF that
# this target puts next to them (_ext/reader_path.py; without it they say the PDF is not
# part of the build).
pdf: install assets chromium poppler
	ATTENTION_PDF_EDITION=1 $(BIN)/jupyter-book build . $(JB_STRICT)
	$(BIN)/python tools/build_pdf.py
	$(MAKE) test-pdf

## test-pdf: check the PDF against the built site (tests/pdf/check_pdf.py; run by `make pdf`)
test-pdf: install poppler
	$(BIN)/pytest tests/pdf/check_pdf.py -p no:cacheprovider

## poppler: pdftotext, pdfimages and pdftoppm (Debian's poppler-utils), which read the PDF back
poppler:
	@command -v pdftoppm >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && $$SUDO apt-get install -y poppler-utils; }

## binder-check: what Binder does, from scratch: a new venv from requirements.txt alone, the
## postBuild step, then every chapter executed in it (outputs are not written back). The venv
## is left in $(BINDER_VENV) for inspection and replaced by the next run. The pages that need
## PyTorch (TORCH_NOTEBOOKS), which Binder does not install, run last, after the reader's
## own step that they describe: installing it (here from requirements-torch.txt).
TORCH_NOTEBOOKS := chapters/reference/same_in_pytorch/same_in_pytorch.ipynb
binder-check:
	rm -rf $(BINDER_VENV)
	$(PYTHON) -m venv $(BINDER_VENV)
	$(BINDER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BINDER_VENV)/bin/python -m pip install --quiet -r requirements.txt
	PATH="$(abspath $(BINDER_VENV))/bin:$$PATH" ./postBuild
	for nb in $(filter-out $(TORCH_NOTEBOOKS),$(NOTEBOOKS)); do (cd "$$(dirname $$nb)" && \
		MPLBACKEND=Agg "$(abspath $(BINDER_VENV))/bin/jupyter" execute --timeout=600 \
		"$$(basename $$nb)") || exit 1; done
	$(BINDER_VENV)/bin/python -m pip install --quiet -r requirements-torch.txt
	for nb in $(TORCH_NOTEBOOKS); do (cd "$$(dirname $$nb)" && MPLBACKEND=Agg \
		"$(abspath $(BINDER_VENV))/bin/jupyter" execute --timeout=600 "$$(basename $$nb)") \
		|| exit 1; done
	@echo "binder-check: all $(words $(NOTEBOOKS)) notebooks ran in a fresh environment"

## lab: open the chapters in JupyterLab (installed into .venv on first use; not needed otherwise)
lab: install
	$(BIN)/python -c "import jupyterlab" 2>/dev/null || $(BIN)/python -m pip install $(JUPYTERLAB)
	$(BIN)/jupyter lab chapters/

## execute: re-run every chapter in place (after editing a notebook or attnlib)
execute: install
	for nb in $(NOTEBOOKS); do (cd "$$(dirname $$nb)" && \
		$(abspath $(BIN))/jupyter execute --inplace "$$(basename $$nb)") || exit 1; done

## bench: attnlib's attention against a careful numpy reference and PyTorch's fast and math
## paths (time ratios in alternating rounds, 1 and 2 threads, causal and not, float32 and
## float64; peak memory in fresh processes). Installs its own extras (torch, threadpoolctl)
## into .venv from tests/benchmarks/requirements.txt. Writes chapters/data/bench*.csv/json and
## chapters/images/bench*.png. Not part of `make test`. OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE
## (set on some machines for old OpenBLAS builds) are unset for this command alone; the
## metadata records their values and the BLAS kernel that ran.
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) tests/benchmarks/requirements.txt
	$(BIN)/python -m pip install -r tests/benchmarks/requirements.txt
	touch $@

bench: install $(BENCH_STAMP)
	BENCH_ORIGINAL_ENV="OPENBLAS_CORETYPE=$${OPENBLAS_CORETYPE-unset} OPENBLAS_L2_SIZE=$${OPENBLAS_L2_SIZE-unset}" \
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python tests/benchmarks/bench_attention.py

## bench-pages: every page of the built site (_build/html) on a throttled phone in Chromium
## (CPU 4x slower, 1.6 Mbit/s, 150 ms round trip, text served gzipped, empty cache): the
## bytes transferred and the median time until the page is usable (explorers drawn,
## questions ready) and its blocked main thread, over three first visits; targets 1 MB and
## 8 s, reported, never asserted; writes _build/page_timings.csv. Run it on a quiet
## machine after `make book`. Then live code (tests/benchmarks/bench_live.py): bytes served
## by "Make this page live", seconds to Python ready, the first output and the first figure,
## cold and warm, into _build/live_timings.csv. Not part of `make test`.
.PHONY: bench-pages
bench-pages: install chromium
	$(BIN)/python tests/benchmarks/bench_pages.py --runs 3
	$(BIN)/python tests/benchmarks/bench_live.py --runs 3

## train: retrain the bottleneck chapter's translators to convergence (context vector and attention, each
## with a bidirectional and a forward-only encoder, and two fairer context-vector baselines with a
## bidirectional encoder, matched to the attention model in parameters: a larger decoder, and a GRU
## encoder; 3 seeds each; two processes, a progress bar), then evaluate them; writes
## chapters/why_attention/bottleneck/data/translation_models.npz/.json (not part of test).
## A run takes 90-400 CPU seconds (MEASUREMENTS.md): all 18 about 30 minutes of two idle cores.
## Each run is stored as it finishes. One piece at a time, keeping the other stored runs:
##   make train TRAIN_KINDS="attention-forward context-forward" TRAIN_SEEDS="0 1"
TRAIN_KINDS ?=
TRAIN_SEEDS ?=
train: install
	OMP_NUM_THREADS=1 $(BIN)/python -m book_support.experiments.translation_training \
		$(if $(TRAIN_KINDS),--kinds $(TRAIN_KINDS)) $(if $(TRAIN_SEEDS),--seeds $(TRAIN_SEEDS))

## train-lm: retrain the language models of the chapters "Attention that writes" in two
## processes (one core each), longest run first: the character model of the book's prose,
## the same model from more seeds and with whole chapters held out, the attention variants
## (and those matched in parameters), the induction-head models; progress bars; writes
## chapters/attention_that_writes/language_model/data/lm_main.npz/.json, lm_seeds.json,
## kv_cache/data/lm_variants.json, induction_heads/data/induction_models.npz/.json
## (about 2 hours of one core: 105 min for the language models, plus the induction models;
## not part of test). `make train-lm LM_GROUPS="seeds matched"`
## trains only the groups named (main, seeds, variants, matched, induction).
.PHONY: train-lm bench-lm
LM_GROUPS ?=
train-lm: install
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m book_support.experiments.lm_runs \
		$(LM_GROUPS)

## train-modern: the experiment of the chapter "The modern decoder block": GPT-2's block,
## the modern block (RMSNorm, SwiGLU, RoPE, grouped-query attention, AdamW) and GPT-2's
## block with each change alone, parameter counts matched, 3 seeds each (21 runs capped at
## 1,500 steps, 18 min of one core, in two processes); the two blocks again, 3 seeds each,
## at a constant rate until the patience rule stops them (6 runs of 3,000-7,100 steps,
## 19 min of one core, one at a time); the modern block with a sliding window of 16 (1 run,
## 1 min, weights kept). Progress bars; writes modern_runs.json and modern_window.npz in
## chapters/attention_that_writes/modern_decoder/data/ (not part of test)
.PHONY: train-modern
train-modern: install
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python \
		chapters/attention_that_writes/modern_decoder/modern_decoder_runs.py

## bench-lm: the processor time of one generated token with and without the KV cache at
## lengths 16 to 1,024 (alternating rounds, one thread; median and range); writes chapters/attention_that_writes/kv_cache/data/lm_kv_bench.csv/.json
## (not part of test; nothing asserts a time)
bench-lm: install
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python tests/benchmarks/bench_kv_cache.py

## contents: the book's parts and chapters in reading order, with their files (from
## _toc.yml; the folders are named by topic, so `ls` sorts them by name)
.PHONY: contents
contents:
	@$(BIN)/python tools/contents.py

## serve: preview the built site at http://127.0.0.1:8000
serve:
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory _build/html

clean:
	rm -rf _build _site_assets
