# govlab: `make demo` to see it, `make test` to check it.
# Everything is installed into $(VENV); nothing is installed globally.

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: all venv build test demo bench clean

all: build

# The virtualenv and the build/test tools, redone when pyproject.toml changes.
venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" pandas tqdm pytest simpy scipy
	touch $@

# Compile the engine and the bindings, install govlab into the venv (editable).
build: venv
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q

test: build
	cargo test --release -p govlab-core
	$(PY) -m pytest -q

demo: build
	@mkdir -p out
	$(VENV)/bin/govlab compare experiments/quick.toml --db out/demo.sqlite
	@echo
	@echo "Runs are stored in out/demo.sqlite; 'govlab report out/demo.sqlite' prints the table again."
	@echo "A single run: .venv/bin/govlab run --workload periodic:tasks=4 --cpufreq schedutil --cpuidle menu --duration 2s"

bench: build
	$(PY) bench/run.py --write

clean:
	rm -rf target $(VENV) .pytest_cache python/govlab/_core*.so
	find python -name __pycache__ -type d -prune -exec rm -rf {} +
