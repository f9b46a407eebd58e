# The two commands a newcomer needs: `make run` and `make test`. Both set everything up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# make run listens on this address only; HOST=0.0.0.0 make run serves other machines too
HOST ?= 127.0.0.1
# pytest-xdist workers for make test / test-fast (each test module runs whole on one worker, the browser modules in
# two groups, the long ones first: tests/conftest.py). TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

.PHONY: run test test-fast bench chromium postgresql clean model screenshots

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# Debian's chromium for the Playwright browser tests (we run as root; no browser download), with
# CJK and emoji fonts so Chinese text and the app's icons render in the browser and the screenshots.
chromium:
	@{ test -x /usr/bin/chromium && test -d /usr/share/fonts/opentype/noto && test -d /usr/share/fonts/truetype/noto; } || { \
		echo "installing Debian's chromium and CJK / emoji fonts for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null; }

# Debian's PostgreSQL for the store tests: tests/postgres.py starts a throw-away cluster (initdb, pg_ctl) in a
# temp folder on a free port, as the postgres user, and stops it afterwards.
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing Debian's postgresql for the store tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

run: $(VENV)/.runtime
	$(PY) -c "from navigo_core.maps.assets import ensure_leaflet_assets; ensure_leaflet_assets()"
	$(VENV)/bin/streamlit run app.py --server.address $(HOST) --server.port $(PORT) --server.headless true

test: $(VENV)/.dev chromium postgresql
	$(PYTEST)

test-fast: $(VENV)/.dev postgresql
	$(PYTEST) -m "not e2e"

# Every page in English and 中文 at 1280 and 1024 px into docs/screenshots/ (an offline app on a free port
# with a throw-away database; see scripts/screenshots.py).
screenshots: $(VENV)/.dev chromium
	$(PY) scripts/screenshots.py

bench: $(VENV)/.dev postgresql chromium
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_store_concurrency.py
	$(PY) benchmarks/bench_solver.py
	$(PY) benchmarks/bench_upstream.py
	@echo "L2 thresholds come from the repository's labelled sets; to recalibrate them:"
	@echo "  $(PY) -m navigo_core intent calibrate --offline --encoder tfidf --min-precision 0.97 --data tests/data/intent_labelled.jsonl --data tests/data/business_intents.jsonl --data tests/data/out_of_scope.jsonl --data tests/data/calibration.jsonl"
	$(PY) benchmarks/bench_intent.py
	$(PY) benchmarks/bench_l2_heldout.py
	$(PY) benchmarks/bench_travel_guess.py
	$(PY) benchmarks/bench_security.py
	$(PY) benchmarks/bench_planner.py
	$(PY) benchmarks/bench_llm.py
	$(PY) benchmarks/bench_understand.py
	$(PY) benchmarks/bench_redos.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis static/vendor

# Rebuild the prompt-injection classifier (navigo_core/security/data/injection_model.npz) bit for bit
# from training/injection/* and the repository's benign sets.
model: $(VENV)/.runtime
	$(PY) -m navigo_core.security.train
