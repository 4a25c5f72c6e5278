"""Linting: the diagnostic and fix model, the rule registry and context, the engine that runs the
rules over a file, inline suppressions, and the edits and fix loop."""
