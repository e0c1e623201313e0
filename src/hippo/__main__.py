"""``python -m hippo``: a scripted run on the embedded defaults."""

import sys

from hippo.surfaces.demo import main

sys.exit(main())
