
from tests.data.holdout42._generator import main

main()
