"""The notebook side: find the Jupyter server, talk to the copilot API, the magics.

This code runs inside a notebook's kernel (ipykernel) as its client of the copilot; it
is not a kernel itself, hence the package's name.

- `copilot.Copilot`: the public client (`from jupyter_gns3_copilot import Copilot`);
- `api_client.CopilotClient`: HTTP + SSE (sync httpx; the kernel runs its own event loop);
- `discovery`: where the server is, seen from a kernel;
- `turn.Turn`: the result of one turn; `magics`: `%copilot` / `%%copilot`;
- `transcript`, `reports`: text renderings for terminals and informational magics.

Nothing is imported here: `import jupyter_gns3_copilot` stays cheap.
"""
