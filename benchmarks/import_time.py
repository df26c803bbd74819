"""What the copilot adds to a Jupyter server's start (goal: <= 150 ms), in fresh processes.

Each repetition runs two fresh interpreters:

- "package import": `import jupyter_gns3_copilot` alone (what `%load_ext` and extension
  discovery pay first);
- "extension load": in an initialized ServerApp without the copilot (JUPYTER_NO_CONFIG
  keeps the installed auto-enable file out), the time jupyter_server spends adding,
  linking and loading the extension: the package import, traits and config, handlers.

The goal applies to the extension load (it includes the package import). Each run also
reports heavy modules the load imported
(LangChain, LangGraph, openai, tiktoken, pydantic, cryptography, httpx, telnetlib3): there
should be none. Prints medians. The last line is the memory the copilot adds once warm:
the RSS of an initialized ServerApp before the extension is loaded, and after the
warm-up (`server.warmup`: every module a chat turn imports, openai's client resources,
LangGraph's first compile) and a first turn's context preparation for a gpt-4o model (a
short conversation: no tokenizer). The line before it adds the o200k_base tokenizer, which
a conversation nearing its context window builds.

Run: `.venv/bin/python benchmarks/import_time.py [--repeat 15]`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from _common import parse_args

GOAL_MS = 150.0
HEAVY = (
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "openai",
    "tiktoken",
    "pydantic",
    "cryptography",
    "httpx",
    "telnetlib3",
)

PACKAGE_IMPORT = """
import json, sys, time
start = time.perf_counter()
import jupyter_gns3_copilot
elapsed = time.perf_counter() - start
print(json.dumps({"ms": elapsed * 1000, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""

EXTENSION_LOAD = """
import json, logging, sys, time
from jupyter_server.serverapp import ServerApp

app = ServerApp(jpserver_extensions={}, open_browser=False, log_level="ERROR")
app.initialize(argv=[], new_httpserver=False)
before = set(sys.modules)
start = time.perf_counter()
manager = app.extension_manager
manager.add_extension("jupyter_gns3_copilot", enabled=True)
manager.link_extension("jupyter_gns3_copilot")
manager.load_extension("jupyter_gns3_copilot")
elapsed = time.perf_counter() - start
loaded = "jupyter_gns3_copilot.server.app" in sys.modules
print(json.dumps({"ms": elapsed * 1000, "loaded": loaded,
                  "heavy": [m for m in HEAVY if m in sys.modules and m not in before]}))
"""

MEMORY = """
import json, sys
from jupyter_server.serverapp import ServerApp

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

app = ServerApp(jpserver_extensions={}, open_browser=False, log_level="ERROR")
app.initialize(argv=[], new_httpserver=False)
plain = rss_mb()
manager = app.extension_manager
manager.add_extension("jupyter_gns3_copilot", enabled=True)
manager.link_extension("jupyter_gns3_copilot")
manager.load_extension("jupyter_gns3_copilot")
from jupyter_gns3_copilot.server.warmup import WarmUp
before = set(sys.modules)
WarmUp()._run()
from langchain_core.messages import HumanMessage
from jupyter_gns3_copilot.agent.context import prepare_context
from jupyter_gns3_copilot.agent.agent_context import make_tool_specs, tool_schema_tokens
from jupyter_gns3_copilot.agent.prompts import system_prompt
from jupyter_gns3_copilot.agent.tokens import token_counter_for_model

mode = "lab_automation_assistant"
prepare_context([HumanMessage("Which devices are in my lab?")], system_prompt=system_prompt(mode),
                topology=None, context_limit=128, model="gpt-4o",
                tool_tokens=tool_schema_tokens("gpt-4o", tuple(make_tool_specs(mode))))
warm = rss_mb()
tops = {}
for name in set(sys.modules) - before:
    top = name.split(".")[0]
    tops[top] = tops.get(top, 0) + 1
token_counter_for_model("gpt-4o").count_text("near the window")
print(json.dumps({"plain": plain, "warm": warm, "tokenizer": rss_mb(),
                  "modules": len(set(sys.modules) - before),
                  "tops": sorted(tops.items(), key=lambda kv: -kv[1])[:8]}))
"""


def run(code: str, env: dict[str, str]) -> dict[str, object]:
    prelude = f"HEAVY = {HEAVY!r}\n"
    completed = subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parse_args(parser, repeat=1)
    with tempfile.TemporaryDirectory() as runtime:
        env = {
            **os.environ,
            "JUPYTER_NO_CONFIG": "1",
            "JUPYTER_RUNTIME_DIR": runtime,
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        imports, loads, heavy = [], [], set()
        for _ in range(args.repeat):
            imported = run(PACKAGE_IMPORT, env)
            loaded = run(EXTENSION_LOAD, env)
            assert loaded["loaded"], "the extension did not load"
            imports.append(float(imported["ms"]))  # type: ignore[arg-type]
            loads.append(float(loaded["ms"]))  # type: ignore[arg-type]
            heavy.update(imported["heavy"])  # type: ignore[arg-type]
            heavy.update(loaded["heavy"])  # type: ignore[arg-type]
    package, extension = statistics.median(imports), statistics.median(loads)
    print(f"package import (fresh interpreter)        median {package:7.1f} ms")
    print(
        f"extension load incl. import (add+link+load) median {extension:7.1f} ms"
        f"   (goal <= {GOAL_MS:g} ms)"
    )
    print(f"heavy modules imported: {', '.join(sorted(heavy)) or 'none'}")
    print(f"repetitions: {args.repeat}")
    with tempfile.TemporaryDirectory() as runtime:
        memory = run(MEMORY, {**env, "JUPYTER_RUNTIME_DIR": runtime})
    print(f"modules the warm-up imports: {memory['modules']}, most from {memory['tops']}")
    plain, warm = float(memory["plain"]), float(memory["warm"])  # type: ignore[arg-type]
    print(
        f"with the o200k_base tokenizer (a conversation near its window): "
        f"+{float(memory['tokenizer']) - plain:.0f} MB"  # type: ignore[arg-type]
    )
    print(
        f"memory after the warm-up and a first turn's context: +{warm - plain:.0f} MB "
        f"over a plain Jupyter server (RSS {plain:.0f} -> {warm:.0f} MB)"
    )


if __name__ == "__main__":
    main()
