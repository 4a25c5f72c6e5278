"""Nix syntax and meaning: the source text, its tree-sitter tree, node helpers, the shell text
inside strings, the per-file semantic view and where a node stands (package, dev shell, module)."""
