# Every target sets itself up: a fresh machine needs only python3 (>= 3.11) and make.
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev

.PHONY: demo test lint bench clean

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

demo: $(VENV)/.installed-$(EXTRAS)
	$(PY) examples/quickstart.py

test: $(VENV)/.installed-$(EXTRAS)
	$(PY) -m pytest -q

lint: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/ruff check agentflow providers tests benchmarks examples
	$(VENV)/bin/mypy --strict agentflow

bench: $(VENV)/.installed-$(EXTRAS)
	$(PY) benchmarks/bench_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
