# The two commands that matter: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEBIAN_PACKAGES := vpcs chromium
PYTEST_ARGS ?=

.PHONY: demo test lint system-deps install lab-provision lab lab-stop clean

demo: install system-deps lab-provision
	$(PY) scripts/demo.py

test: install system-deps lint lab-provision
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "Python >= 3.10 is needed (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# Debian packages: installed when running as root, otherwise a clear message.
system-deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing Debian packages:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "Missing Debian packages:$$missing. Run: sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi

# gns3-server in its own venv (about a minute the first time, a no-op afterwards).
lab-provision: install system-deps
	$(VENV)/bin/gns3-copilot-lab provision

# JupyterLab on the demo's setup (local lab + scripted or configured model), for trying it by hand.
lab: install system-deps lab-provision
	$(PY) scripts/lab.py

lab-stop: install
	$(VENV)/bin/gns3-copilot-lab stop

clean:
	rm -rf build .pytest_cache .ruff_cache
