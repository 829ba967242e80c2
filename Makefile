# kcspec — set-up, the main job, and the test tiers (tests/README.md).
#   make run        set everything up (.venv, the project and its dependencies, Debian's graphviz) and run `kcspec verify`
#   make test       unit, integration and quality tiers on every core (slow tests excluded), fixed seed
#   make test-fast  the unit tier alone (about two minutes): run it before every commit
#   make test-slow  the slow tier (long explorations and campaigns)
#   make lint       ruff and lint-imports (the layer contracts); make typecheck: mypy --strict (the package, the benchmarks and the tests); make package-check: the wheel, installed and run
#   make bench NAME=…   one benchmark of benchmarks/manifest.toml at full size; make bench-smoke: all at their smallest
#   make generated  regenerate what is derived from spec/ and committed: diagrams, TLA+ modules, docs/rules.md

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kcspec-installed
PYTEST_SEED ?= 0

.PHONY: run setup test test-fast test-slow lint typecheck check bench bench-speed bench-smoke clean package-check generated

run: setup
	$(PYENV) $(BIN)/kcspec verify

setup: $(STAMP) graphviz

# The project and its dependencies are installed by uv (from PyPI, into the virtualenv: about half pip's time on a
# fresh machine), or by pip when uv cannot (an index only pip is configured for).
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.4"
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[dev,spark]" \
	  || { echo "uv could not install the project: installing it with pip"; \
	       $(BIN)/python -m pip install --quiet --upgrade pip && $(BIN)/python -m pip install --quiet -e ".[dev,spark]"; }
	touch $(STAMP)

# Debian's graphviz provides `dot`, used to render diagrams; installed only when missing.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  echo "installing Debian's graphviz (dot is missing)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	}

# The suite starts hundreds of Python processes (xdist workers, kcspec commands, systems under test, explorer and
# prover workers): each compiles kcspec's modules again unless their bytecode is kept, which an environment with
# PYTHONDONTWRITEBYTECODE set forbids. The tests and `make run` keep it, in a folder of the virtualenv (the tree
# stays clean).
PYENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
PYTEST := $(PYENV) $(BIN)/pytest -p no:cacheprovider --hypothesis-seed=$(PYTEST_SEED)
WORKERS ?= auto
# `exec`: the process make starts for a test recipe is pytest itself (not a shell waiting for it), so a signal to
# it stops the suite and its children instead of leaving pytest running on its own.

test: setup
	exec $(PYTEST) -q -n $(WORKERS) --dist loadfile --durations=25 -m "not slow" tests/unit tests/integration tests/quality

test-fast: setup
	exec $(PYTEST) -q -n $(WORKERS) -m "not slow" tests/unit

test-slow: setup
	exec $(PYTEST) -q -n $(WORKERS) --dist loadfile -m slow tests

# lint-imports checks the layer contracts of pyproject.toml ([tool.importlinter]).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	bash .ci/import-tree .import-tree
	cd .import-tree && ../$(BIN)/lint-imports --no-cache --no-logo

# Neither mypy nor import-linter follows setuptools' package-dir mapping: both read a symlink tree laid out as
# installed (.ci/import-tree). The tests import the benchmarks' runner and harness as top-level modules, with
# benchmarks/ on the path (tests/support/bench_modules.py): mypy finds them there too.
typecheck: setup
	bash .ci/import-tree .import-tree
	cd .import-tree && MYPYPATH=. ../$(BIN)/mypy --config-file ../pyproject.toml -p kcspec
	cd .import-tree && MYPYPATH=. ../$(BIN)/mypy --config-file ../pyproject.toml benchmarks/*.py
	cd .import-tree && MYPYPATH=.:benchmarks ../$(BIN)/mypy --config-file ../pyproject.toml tests

check: lint typecheck test

# After a change to spec/: the committed artefacts that derive from it (the tests fail while one is stale).
generated: setup
	$(BIN)/kcspec diagrams --out diagrams
	$(BIN)/kcspec diagrams --coverage diagrams/coverage/scenarios.json --out diagrams
	$(BIN)/kcspec tla modules
	$(BIN)/kcspec spec rules --out docs/rules.md

# Build the sdist and wheel, install the wheel into a fresh virtualenv and run the installed tool from outside
# the repository (a wheel that cannot start is caught here, not by a user).
package-check: setup
	bash .ci/package-check $(PYTHON)

# One benchmark of benchmarks/manifest.toml at full size, its run appended to its results log (default: the
# 1M-partition failover); `benchmarks/run.py list` names them all.
NAME ?= failover_1m
bench: setup
	$(BIN)/python benchmarks/run.py run $(NAME)

# Every one-core speed target (reference floor, explorer, 1M-partition failover and broker failure) against its goal.
bench-speed: setup
	$(BIN)/python benchmarks/run.py run speed_targets

# Every benchmark at its smallest size (a check that each still runs; writes nothing under benchmarks/).
bench-smoke: setup
	$(BIN)/python benchmarks/run.py smoke

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
