from tests.data.holdout33._generator import main

main()
