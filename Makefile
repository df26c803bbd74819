# The two commands that matter: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEBIAN_PACKAGES := vpcs chromium tshark iputils-ping busybox
ROUTER_PACKAGES := qemu-system-x86 qemu-utils linux-image-cloud-amd64 e2fsprogs
PYTEST_ARGS ?=
CHECK_MARKERS ?= not lab and not browser and not hub and not slow
CACHE_DIR ?= $(or $(GNS3_COPILOT_LAB_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/jupyter_gns3_copilot)
CHP_DIR := $(CACHE_DIR)/configurable-http-proxy
CHP := $(CHP_DIR)/node_modules/.bin/configurable-http-proxy

FRONTEND := labextension
FRONTEND_STAMP := $(FRONTEND)/node_modules/.built
FRONTEND_SOURCES := $(FRONTEND)/package.json $(FRONTEND)/package-lock.json $(FRONTEND)/build-widget.mjs \
	$(FRONTEND)/tsconfig.json $(shell find $(FRONTEND)/src $(FRONTEND)/style $(FRONTEND)/schema -type f 2>/dev/null)

.PHONY: demo test check lint docs types system-deps node install frontend lab-provision hub-proxy lab lab-stop clean

demo: install system-deps lab-provision
	$(PY) scripts/demo.py

test: install system-deps lint lab-provision hub-proxy
	cd $(FRONTEND) && npm test --silent
	CONFIGURABLE_HTTP_PROXY=$(CHP) $(PY) -m pytest --durations=25 $(PYTEST_ARGS)

# The fast loop while developing (under 3 minutes): lint, the front end's unit tests and
# the tests that need no GNS3 lab, browser or JupyterHub and are not slow; CHECK_MARKERS
# chooses another part (docs/development.md).
check: lint
	cd $(FRONTEND) && npm test --silent
	$(PY) -m pytest -m "$(CHECK_MARKERS)" $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	cd $(FRONTEND) && npm run --silent typecheck

# The documentation site (Sphinx + MyST, docs/) into docs/_build/html, as strict as the test
# that builds it in `make test` (tests/test_docs_site.py): warnings are errors.
docs: install
	$(PY) -m sphinx -b html -n -W --keep-going -q docs docs/_build/html
	@echo "Open docs/_build/html/index.html"

install: $(STAMP) frontend

# The front end's types for the chat events, the turn model, the REST answers and the
# request bodies, generated from the Python models: their JSON Schema
# (jupyter_gns3_copilot/wire_schema.py) into labextension/src/generated/, then the
# TypeScript compiled from it
# (json-schema-to-typescript). All are checked in; `make test` fails when one differs from
# a fresh generation (tests/test_wire_schema.py and the labextension's
# src/generated/generated.test.ts). Run it after changing any of these models.
types: install
	$(PY) -m jupyter_gns3_copilot.wire_schema $(FRONTEND)/src/generated
	cd $(FRONTEND) && npm run --silent generate:types

# The JupyterLab extension and the widget bundle, from labextension/ (TypeScript), into
# the package (jupyter_gns3_copilot/labextension, static/widget.{js,css}); rebuilt when a source
# changes. The venv's jupyter-builder (JupyterLab's extension builder) runs the labextension
# build and links it into the venv for development.
frontend: $(FRONTEND_STAMP)

$(FRONTEND_STAMP): $(FRONTEND_SOURCES) $(STAMP) | node
	cd $(FRONTEND) && npm ci --no-audit --no-fund --loglevel=error
	cd $(FRONTEND) && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npm run --silent build
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter-builder develop --overwrite . >/dev/null
	touch $(FRONTEND_STAMP)

# Node.js and npm from Debian when missing (as root, otherwise a clear message).
node:
	@command -v npm >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
		else \
			echo "Node.js and npm are needed to build the front end. Run: sudo apt-get install -y nodejs npm"; \
			exit 1; \
		fi; }

# The kernel and server configuration files are copied into the venv at install time.
$(STAMP): pyproject.toml $(wildcard jupyter-config/*/*)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "Python >= 3.10 is needed (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The front end is built by the `frontend` target with this venv's jupyter-builder, not
	# again inside pip's build (the wheel's build hook does it when building a wheel).
	# A reinstall must not write the wheel's copy of the labextension through the link
	# `jupyter-builder develop` left (the `frontend` target makes it again after
	# this): it lands in the build output, and install.json there then collides with the
	# wheel's own at the next install.
	if [ -L $(VENV)/share/jupyter/labextensions/jupyter-gns3-copilot ]; then \
		rm $(VENV)/share/jupyter/labextensions/jupyter-gns3-copilot \
			jupyter_gns3_copilot/labextension/install.json -f; fi
	SKIP_JUPYTER_BUILDER=1 $(PY) -m pip install --quiet -e ".[test,docs]"
	touch $(STAMP)

# Debian packages: installed when running as root, otherwise a clear message. tshark
# decodes packet captures; its debconf question (may non-root users capture?) is answered
# "no" beforehand: the copilot only reads capture files. iputils-ping and busybox are the
# real Linux ping and traceroute whose answers the tests read as a Linux device's.
# ROUTER_PACKAGES make the lab's Linux router (a QEMU node booting Debian's cloud kernel
# with a BusyBox initramfs, labkit/router.py): the one node here that forwards packets
# between subnets; e2fsprogs makes the FRR router's disk (labkit/frr.py). FRR itself is
# not installed here: the lab kit fetches Debian's .debs with apt-get download into its
# cache. Their recommends (firmware, GUI back ends) are not needed.
system-deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	router=""; for p in $(ROUTER_PACKAGES); do \
		dpkg -s $$p >/dev/null 2>&1 || router="$$router $$p"; done; \
	if [ -n "$$missing$$router" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing Debian packages:$$missing$$router"; \
			echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
			apt-get update -qq; \
			if [ -n "$$missing" ]; then \
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || exit 1; fi; \
			if [ -n "$$router" ]; then \
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$router || exit 1; fi; \
		else \
			echo "Missing Debian packages:$$missing$$router. Run: sudo apt-get install -y$$missing$$router"; exit 1; \
		fi; \
	fi

# gns3-server in its own venv (about a minute the first time, a no-op afterwards).
lab-provision: install system-deps
	$(VENV)/bin/gns3-copilot-lab provision

# configurable-http-proxy (npm) for the JupyterHub test, under the cache dir.
hub-proxy: system-deps node
	@test -x $(CHP) || { \
		echo "Installing configurable-http-proxy into $(CHP_DIR)"; \
		npm install --silent --no-audit --no-fund --prefix $(CHP_DIR) configurable-http-proxy@5; }

# JupyterLab on the demo's setup (local lab + scripted or configured model), for trying it by hand.
# `make lab` keeps its lab in build/lab across restarts; RESET=1 starts anew.
lab: install system-deps lab-provision
	$(PY) scripts/lab.py $(if $(RESET),--reset)

lab-stop: install
	$(VENV)/bin/gns3-copilot-lab stop
	$(VENV)/bin/gns3-copilot-lab stop --instance-dir build/lab/gns3

clean:
	rm -rf build .pytest_cache .ruff_cache docs/_build $(FRONTEND)/lib $(FRONTEND_STAMP)
