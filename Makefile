# The two commands a newcomer needs: `make run` and `make test`. Both set everything up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run test test-fast bench chromium clean model

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# Debian's chromium for the Playwright browser tests (we run as root; no browser download).
chromium:
	@test -x /usr/bin/chromium || { \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

run: $(VENV)/.runtime
	$(PY) -c "from navigo_core.maps.assets import ensure_leaflet_assets; ensure_leaflet_assets()"
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.headless true

test: $(VENV)/.dev chromium
	$(PY) -m pytest

test-fast: $(VENV)/.dev
	$(PY) -m pytest -m "not e2e"

bench: $(VENV)/.dev
	$(PY) benchmarks/bench_solver.py
	$(PY) benchmarks/bench_upstream.py
	@echo "L2 thresholds come from the repository's labelled sets; to recalibrate them:"
	@echo "  $(PY) -m navigo_core intent calibrate --offline --encoder tfidf --min-precision 0.97 --data tests/data/intent_labelled.jsonl --data tests/data/business_intents.jsonl --data tests/data/out_of_scope.jsonl --data tests/data/calibration.jsonl"
	$(PY) benchmarks/bench_intent.py
	$(PY) benchmarks/bench_l2_heldout.py
	$(PY) benchmarks/bench_security.py
	$(PY) benchmarks/bench_planner.py
	$(PY) benchmarks/bench_understand.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis static/vendor

# Rebuild the prompt-injection classifier (navigo_core/security/data/injection_model.npz) bit for bit
# from training/injection/* and the repository's benign sets.
model: $(VENV)/.runtime
	$(PY) -m navigo_core.security.train
