"""``python -m hippo``: a scripted run on the embedded defaults."""

import sys

from hippo.interfaces.demo import main

sys.exit(main())
