"""The copilot agent: model access, context window, the LangGraph graph (heavy imports are lazy)."""
