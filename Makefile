# The two commands that matter: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEBIAN_PACKAGES := vpcs chromium
PYTEST_ARGS ?=
CACHE_DIR ?= $(or $(GNS3_COPILOT_LAB_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/jupyter_gns3_copilot)
CHP_DIR := $(CACHE_DIR)/configurable-http-proxy
CHP := $(CHP_DIR)/node_modules/.bin/configurable-http-proxy

.PHONY: demo test lint system-deps install lab-provision hub-proxy lab lab-stop clean

demo: install system-deps lab-provision
	$(PY) scripts/demo.py

test: install system-deps lint lab-provision hub-proxy
	CONFIGURABLE_HTTP_PROXY=$(CHP) $(PY) -m pytest $(PYTEST_ARGS)

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

# configurable-http-proxy (npm) for the JupyterHub test, under the cache dir; Node.js and
# npm from Debian when missing (as root, otherwise a clear message).
hub-proxy: system-deps
	@test -x $(CHP) || { \
		command -v npm >/dev/null || { \
			if [ "$$(id -u)" = 0 ]; then \
				apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
			else \
				echo "npm is needed for the JupyterHub test. Run: sudo apt-get install -y nodejs npm"; \
				exit 1; \
			fi; }; \
		echo "Installing configurable-http-proxy into $(CHP_DIR)"; \
		npm install --silent --no-audit --no-fund --prefix $(CHP_DIR) configurable-http-proxy@5; }

# JupyterLab on the demo's setup (local lab + scripted or configured model), for trying it by hand.
lab: install system-deps lab-provision
	$(PY) scripts/lab.py

lab-stop: install
	$(VENV)/bin/gns3-copilot-lab stop

clean:
	rm -rf build .pytest_cache .ruff_cache
