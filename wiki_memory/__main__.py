from wiki_memory.entry import main

main()
