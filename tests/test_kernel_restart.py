"""After a kernel restart the magics take the notebook's project (and its conversation)
back instead of raising `NoProject`.

Everything is real: a Jupyter server subprocess with the extension starts the kernel for
a notebook as JupyterLab does (`POST api/sessions`: the kernel gets the notebook's path
in `JPY_SESSION_NAME` and loads the magics through the shipped kernel configuration), the
kernel is restarted through the server's API, the project is in the REAL local GNS3 lab
(VPCS), and the model is the scripted OpenAI server (a TEST DOUBLE).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jupyter_client.blocking import BlockingKernelClient
from support.server import TITLE_REPLY, add_pcs

from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import text

pytestmark = [pytest.mark.lab, pytest.mark.slow]

NOTEBOOK = "restart me.ipynb"
TIMEOUT = 120


class NotebookKernel:
    """The kernel the server started for `NOTEBOOK`, driven over its channels."""

    def __init__(self, server: JupyterServer, http: httpx.Client) -> None:
        self.server = server
        self.http = http
        session = http.post(
            "api/sessions",
            json={
                "path": NOTEBOOK,
                "name": NOTEBOOK,
                "type": "notebook",
                "kernel": {"name": "python3"},
            },
        )
        session.raise_for_status()
        self.kernel_id = session.json()["kernel"]["id"]
        self.client = self._connect()

    def _connect(self) -> BlockingKernelClient:
        client = BlockingKernelClient()
        client.load_connection_file(
            self.server.work_dir / "runtime" / f"kernel-{self.kernel_id}.json"
        )
        client.start_channels()
        client.wait_for_ready(timeout=TIMEOUT)
        return client

    def run(self, code: str) -> str:
        """Run `code`; what it printed (an error fails the test with its text)."""
        printed: list[str] = []

        def collect(message: dict[str, Any]) -> None:
            content = message["content"]
            if message["msg_type"] == "stream":
                printed.append(content["text"])
            elif message["msg_type"] == "error":
                printed.append(f"{content['ename']}: {content['evalue']}")

        reply = self.client.execute_interactive(code, timeout=TIMEOUT, output_hook=collect)
        output = "".join(printed)
        assert reply["content"]["status"] == "ok", output
        return output

    def restart(self) -> None:
        self.client.stop_channels()
        self.http.post(f"api/kernels/{self.kernel_id}/restart").raise_for_status()
        self.client = self._connect()

    def close(self) -> None:
        self.client.stop_channels()
        self.http.delete(f"api/kernels/{self.kernel_id}")


@pytest.fixture
def kernel(gns3_lab: Any, scripted_llm: Any, tmp_path: Path) -> Iterator[NotebookKernel]:
    model = ModelEndpoint.scripted_model(scripted_llm)
    with (
        JupyterServer(gns3_lab, model, tmp_path / "server", root_dir=tmp_path) as server,
        httpx.Client(
            base_url=server.url,
            headers={"Authorization": f"token {server.token}"},
            timeout=TIMEOUT,
        ) as http,
    ):
        notebook = NotebookKernel(server, http)
        try:
            yield notebook
        finally:
            notebook.close()


def test_a_restarted_kernel_takes_the_notebooks_project_and_conversation_back(
    kernel: NotebookKernel, gns3_project: Any, scripted_llm: Any
) -> None:
    """Given a notebook that used a project and asked something; when its kernel restarts;
    then `%copilot run` works on that project (saying so once), and the next question
    continues the same conversation; another notebook's kernel remembers nothing."""
    asyncio.run(add_pcs(gns3_project, "PC1", start=True))
    scripted_llm.add(
        text("PC1 is there.", when={"last_message": "^Is PC1 there"}),
        text("PC1 check", when=TITLE_REPLY),
        text("Still there.", when={"last_message": "^And now"}),
    )
    assert kernel.run("print(__session__.endswith('restart me.ipynb'))").strip() == "True"
    used = kernel.run(f"%copilot use {gns3_project.project_id}")
    assert "Using project" in used
    kernel.run("first = %copilot --quiet Is PC1 there?")
    session_id = kernel.run("print(first.session_id)").strip()

    kernel.restart()
    ran = kernel.run(
        "turn = %copilot run --quiet PC1: show ip\nprint(turn.tool_results['PC1'].status)"
    )
    assert ran.startswith(f"Using project {gns3_project.name!r} again")
    assert ran.count("Using project") == 1 and "NoProject" not in ran
    assert ran.strip().endswith("ok")
    kernel.run("again = %copilot --quiet And now?")
    assert kernel.run("print(again.session_id, again.text)").strip() == (
        f"{session_id} Still there."
    )
    [request] = [r for r in scripted_llm.chat_requests if "And now" in json.dumps(r.body)]
    assert "Is PC1 there?" in json.dumps(request.body), "the conversation continued"

    other = kernel.http.get("copilot/notebook-projects", params={"path": "/elsewhere.ipynb"})
    assert other.json()["project_id"] is None
