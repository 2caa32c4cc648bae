# structperc — everyday commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SP     := $(BIN)/structperc
MIRROR_DIR := ../shared/corpora
MIRROR := $(if $(wildcard $(MIRROR_DIR)),--mirror $(MIRROR_DIR),)
NP_MODEL := corpora/np-chunker.npz
# Brown clusters of unlabeled English (`make clusters`), read by semisupervised and rerank-chunk
CLUSTER_PATHS := corpora/clusters/paths.txt
# every target that writes a results file then rewrites the figures blocks of README.md and docs/ quoting it
REFRESH := $(BIN)/python benchmarks/sections.py

.PHONY: install warm docs data demo demo-raw-text test bench-serve bench-rawtext test-slow bench bench-crf compile-budget ner-preset sgd-defaults epochs stopping bench-first-run bench-scale reproduce reproduce-ner reproduce-ner-quick reproduce-ner-cv reproduce-ner-dev rerank-experiment rerank-ner rerank-ner-cv rerank-chunk ensembles partial-labels ewt-features ewt-tag-dict clusters semisupervised lint clean

# The package and its dependencies alone: all that `make demo` needs, so a first run installs no more.
$(BIN)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $@

# The extras on top: tests, the peers of the benchmarks, plots, the documentation site, the server.
$(BIN)/.installed: $(BIN)/.core
	$(BIN)/pip install --quiet -e '.[dev,bench,plot,docs,serve]'
	touch $@

# No warm-up here: each command compiles the kernels it calls on first use (with the notice
# "compiling kernels, once"), so `make demo` and `make test` wait only for what they run.
install: $(BIN)/.installed

# Compile every kernel of the package ahead (about 2 minutes), e.g. before timing anything.
warm: install
	$(BIN)/python -m structperc.warmup

# The documentation site, into site/ (gitignored); --strict turns every warning into an error.
docs: install
	$(BIN)/python benchmarks/docs_figures.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

data: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(SP) data fetch wsj_sample $(MIRROR)

demo: $(BIN)/.core
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) train corpora/conll2000/train.txt --model $(NP_MODEL) \
	    --columns word,pos,chunk --only-types NP --templates chunk --epochs 10 --constrain bio
	$(SP) eval corpora/conll2000/test.txt --model $(NP_MODEL)
	@$(MAKE) -s --no-print-directory demo-raw-text

# The demo's last step: raw text with the named model when it is built here; else the command to run
# next, which builds it on first use (from the mirror when there is one: it works offline as printed).
demo-raw-text:
	@if $(SP) models list --json | $(BIN)/python -c "import json, sys; \
	    sys.exit(not any(m['name'] == 'en-ewt-upos' and m['built'] for m in json.load(sys.stdin)))"; then \
	  echo "Mary left early. She was tired." | $(SP) tag - --model en-ewt-upos --output-format jsonl; \
	else \
	  echo "Next, raw text (the named model en-ewt-upos is built on first use):"; \
	  echo "  echo 'Mary left early.' | $(SP) tag - --model en-ewt-upos $(MIRROR) --output-format jsonl"; \
	fi

# two workers (pytest-xdist); each file's tests stay in one worker, as a docs page's examples share names
test: install
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# the slow tests include the pinned Collins (2002) reproduction: it reads the corpora of `make data`
test-slow: install data
	$(BIN)/python -m pytest -q -m slow

# structperc.CRF against sklearn-crfsuite from 500 sentences to the full ned.train, warm, cold, beside a
# busy process, and cross_val_score (about 20 minutes; `bench_crf.py --quick` takes 2)
bench-crf: install
	$(BIN)/python benchmarks/bench_crf.py --corpus $(MIRROR_DIR)/conll2002_nl
	$(BIN)/python benchmarks/headline.py

bench: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python benchmarks/bench_conll2000.py
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(BIN)/python benchmarks/bench_order2.py
	$(BIN)/python benchmarks/bench_dicts.py --corpus $(MIRROR_DIR)/conll2002_nl
	$(BIN)/python benchmarks/bench_crf.py --corpus $(MIRROR_DIR)/conll2002_nl
	$(BIN)/python benchmarks/bench_ner.py --corpus $(MIRROR_DIR)/conll2002_nl
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/headline.py

# what compiling the kernels costs each public path (empty numba cache, then warm) and each kernel;
# writes benchmarks/compile.md (and compile.json) beside the figures of the commits before and after
# each cut (benchmarks/compile_stages/, oldest first: 88bb74d is before any)
COMPILE_STAGES ?= 88bb74d 0aa3161 97bf1d6 8694342 5a43fed 55bea1e
compile-budget: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python benchmarks/compile.py --rounds 3 --before $(COMPILE_STAGES:%=benchmarks/compile_stages/%.json)

# every named model built in a fresh cache; UD English EWT test from its raw text against UDPipe 1.2's
# published figures; writes benchmarks/rawtext.md, benchmarks/models.md and benchmarks/tokenizers.md
bench-rawtext: install
	$(BIN)/python benchmarks/bench_tokenizers.py $(MIRROR)
	$(BIN)/python benchmarks/bench_rawtext.py $(MIRROR)
	$(REFRESH)

# structperc serve under locust beside python-crfsuite behind the same stack: load, start, a 10-minute
# soak, a swap under load, a fuzz (about an hour); writes benchmarks/serve.md (`--quick`: about 15 minutes)
bench-serve: install
	$(BIN)/python benchmarks/bench_serve.py --mirror $(MIRROR_DIR)

# make demo from a fresh clone against python-crfsuite training the same chunker; writes benchmarks/first_run.md
bench-first-run: install
	$(BIN)/python benchmarks/bench_first_run.py
	$(REFRESH)

bench-scale: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python benchmarks/bench_scale.py
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(BIN)/python benchmarks/bench_labels.py --out benchmarks/labels321.md
	$(BIN)/python benchmarks/bench_labels.py --only defaults,crfsuite --runs 3 --out benchmarks/bigtags.md
	$(BIN)/python benchmarks/bench_labels.py --big --epochs 10 --out benchmarks/bigtags_1m.md
	$(BIN)/python benchmarks/bench_labels.py --phases --out benchmarks/bigtags_phases.md
	$(BIN)/python benchmarks/headline.py
	$(REFRESH)

reproduce: install data
	$(SP) reproduce collins2002 --output experiments/results
	$(REFRESH)

# the ner preset's selection on ned.testa; writes experiments/results/ner_preset.md
ner-preset: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/ner_preset.py
	$(REFRESH)

# the SGD rules' default c2 and learning-rate factor, on development data; writes experiments/results/sgd_defaults.md
sgd-defaults: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/sgd_defaults.py

epochs: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/epochs.py

# the stopping rules of the default epochs, chosen on development data (about an hour on 2 busy cores);
# writes experiments/results/stopping.md, and what the rules cost in fit time (stopping_cost.md)
stopping: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(SP) data fetch conll2002_nl $(MIRROR)
	NUMBA_NUM_THREADS=1 $(BIN)/python experiments/stopping.py
	$(BIN)/python experiments/stopping_cost.py --corpus $(MIRROR_DIR)/conll2002_nl

reproduce-ner: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/collins2002_ner.py
	$(REFRESH)

# a bounded Collins table with the context features: no kernel perceptron, no boosting (issue 41)
reproduce-ner-quick: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/collins2002_ner.py --quick
	$(REFRESH)

# the table's feature families, then its voted perceptron's setting, by cross-validation over ned.train's
# jackknifed lists (testa, testb unread)
reproduce-ner-cv: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/collins2002_ner_cv.py
	$(BIN)/python experiments/collins2002_ner_cv.py --voted
	$(REFRESH)

# testa only: the table's learners over shuffle seeds, and feature changes beside its set (after reproduce-ner)
reproduce-ner-dev: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/collins2002_ner_dev.py
	$(REFRESH)

rerank-experiment: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python experiments/rerank_conll2000.py
	$(REFRESH)

# the ner preset's 20-best lists reranked with document, gazetteer and sequence features (issue 41)
rerank-ner: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/rerank_ner.py
	$(REFRESH)

# the ner preset reranker's families checked by cross-validation over ned.train's jackknifed lists; rerank-ner fits the set it finds beside the defaults
rerank-ner-cv: install
	$(SP) data fetch conll2002_nl $(MIRROR)
	$(BIN)/python experiments/rerank_ner_cv.py
	$(REFRESH)

# the chunk preset's 20-best lists reranked, choices on a held-out tenth of train (issue 41)
rerank-chunk: install $(CLUSTER_PATHS)
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python experiments/rerank_chunk.py
	$(REFRESH)

ensembles: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python experiments/ensembles.py
	$(REFRESH)

partial-labels: install
	$(SP) data fetch conll2000 $(MIRROR)
	$(BIN)/python experiments/partial_labels.py
	$(REFRESH)

ewt-features: install
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(BIN)/python experiments/ewt_features.py
	$(REFRESH)

ewt-tag-dict: install
	$(SP) data fetch ud_english_ewt $(MIRROR)
	$(BIN)/python experiments/ewt_tag_dict.py
	$(REFRESH)

# Brown clusters (256, min count 3) of unlabeled_en plus the EWT training words
$(CLUSTER_PATHS): | install
	$(SP) data fetch ud_english_ewt $(MIRROR)
	mkdir -p corpora/clusters
	$(SP) clusters $(MIRROR_DIR)/unlabeled_en/*.txt corpora/ud_english_ewt/en_ewt-ud-train.conllu \
	    --n-clusters 256 --min-count 3 --output $(CLUSTER_PATHS)

clusters: $(CLUSTER_PATHS)

semisupervised: install $(CLUSTER_PATHS)
	$(SP) data fetch conll2000 $(MIRROR)
	$(SP) data fetch ud_english_ewt $(MIRROR)
	CLUSTER_PATHS=$(CLUSTER_PATHS) UNLABELED_DIR=$(MIRROR_DIR)/unlabeled_en \
	    $(BIN)/python experiments/semisupervised.py
	$(REFRESH)

lint: install
	$(BIN)/ruff check structperc tests benchmarks experiments

clean:
	rm -rf $(VENV) build dist *.egg-info
