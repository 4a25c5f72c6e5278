import sys
from pathlib import Path

# The snapshot helpers are shared by several test modules.
sys.path.insert(0, str(Path(__file__).parent))
