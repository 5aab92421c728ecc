import sys

from quizprep.cli import main

sys.exit(main())
