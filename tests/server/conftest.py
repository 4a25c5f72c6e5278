import sys
from pathlib import Path

import pytest_lsp
from pytest_lsp import LanguageClient

# The shared LSP test helpers (lsp_editor.py) live next to the tests.
sys.path.insert(0, str(Path(__file__).parent))

from lsp_editor import CLIENTS, SERVER, start


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request, lsp_client: LanguageClient, tmp_path):
    """A server session per recorded client; `client.editor` drives one document."""
    lsp_client.editor = await start(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()
