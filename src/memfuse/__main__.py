from memfuse.cli import main

main()
