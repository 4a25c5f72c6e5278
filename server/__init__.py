"""The cudalint language server (pygls); arrives with the language-server work."""
