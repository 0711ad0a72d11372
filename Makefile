# govlab: `make demo` to see it, `make test` to check it.
# Everything is installed into $(VENV); nothing is installed globally.

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Debian's chromium, driven by Playwright in the HTML report's browser test.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all venv build test demo bench clean

all: build

# The virtualenv and the build/test tools, redone when pyproject.toml changes.
venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" pandas pyarrow tqdm scipy plotly jinja2 distributed pytest simpy playwright \
		polars ipywidgets ipykernel nbclient nbformat
	touch $@

# Compile the engine and the bindings, install govlab into the venv (editable).
build: venv
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q

# Playwright's own browser download (`playwright install`) is never used.
$(CHROMIUM):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium

test: build $(CHROMIUM)
	cargo test --release -p govlab-core
	$(PY) -m pytest -q

demo: build
	@mkdir -p out
	$(VENV)/bin/govlab reproduce ondemand-copy-prev-load --quick --db out/demo.sqlite --html out/demo.html
	@echo
	@echo "That was the 2014 ondemand patch re-run on a simulated POWER8 (docs/validation.md); all five: .venv/bin/govlab reproduce"
	@echo "HTML report with plots: $(abspath out/demo.html) (self-contained: open it in any browser, no network needed)"
	@echo "Runs are stored in out/demo.sqlite; 'govlab report out/demo.sqlite' prints the tables again."
	@echo "A single run: .venv/bin/govlab run --workload periodic:tasks=4 --cpufreq schedutil --cpuidle menu --duration 2s"

bench: build
	$(PY) bench/run.py --write $(BENCH_ARGS)

clean:
	rm -rf target $(VENV) .pytest_cache python/govlab/_core*.so
	find python -name __pycache__ -type d -prune -exec rm -rf {} +
