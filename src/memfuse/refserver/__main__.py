from memfuse.refserver.server import main

main()
