"""`python -m ascend_lens ...` is `ascend-lens ...` (how the extension and the tests start it)."""

import sys

from ascend_lens.cli import main

sys.exit(main())
