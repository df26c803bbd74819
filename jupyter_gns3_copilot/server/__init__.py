"""The Jupyter server extension: configuration traits and HTTP handlers (thin glue)."""
