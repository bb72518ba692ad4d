from tests.data.holdout34._generator import main

main()
