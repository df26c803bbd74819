"""The copilot benchmark (`gns3-copilot-eval`): the copilot, with a real model, asked to
find and fix each of a lab's faults, scored on the lab's own objectives.

- `runner.py`: the lab checked, saved and snapshotted; each fault x run restored, applied,
  put to the copilot in-process (its changes approved) and checked again;
- `scoring.py`: the scores of one run (diagnosed, fixed, regressions, safe, turns, tool
  calls, tokens, time, cost), the symptom a student reports and the totals per fault;
- `report.py`: JSON lines, a Markdown table and an HTML report with an inline SVG plot;
- `cli.py`: the command line.

No Jupyter import: it runs the chat engine (`chat.AgentService`) directly.
"""
