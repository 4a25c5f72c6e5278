"""A Nix language server stand-in (nil or nixd are not installable here): it answers
`initialize` and publishes nothing, so an editor test can check that cudalint's findings show up
next to another Eglot server."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("stub-nix-server", "1").start_io()
