"""Recall at the moment of need: the few memory pages that bear on a prompt, or on a file the
agent is about to read or edit, handed to the agent by its prompt and tool hooks.

A light part on the hook path (standard library, `config`, `capture`, `pages.status` /
`pages.anchors` / `pages.drift` and `index.readonly` at most; nothing heavy at the top of a
module), below `memory` and the hook process, which both call it. The index is opened only
through `index.readonly`, which refuses a file of another schema version:

- `settings`: the `[recall]` section of `config.toml` and `WIKI_MEMORY_RECALL`;
- `chatter`: prompts that get nothing whatever the memory holds (acknowledgements, steering);
- `terms`: a prompt's content words, identifiers and file paths;
- `find`: the candidate pages, read-only from the search index, scored against the floors;
- `files`: the pages anchored to a file or naming its path;
- `render`: the fenced block the agent is handed;
- `seen`: what this session was handed already (never the same page twice);
- `run`: the whole of one recall, as the hook and `wiki-memory recall` run it;
- `moments`: the gotcha or procedure a shell command is about to walk into, or an error that
  came back is about; `command_forms` the commands in the form pages and the table compare,
  `moment_table` the table of them beside the index;
- `meaning`: asking the warm helper (and starting it), from a hook;
- `helper`: the warm helper itself, a process of its own that keeps the embedding model
  loaded (the one module here that imports the index, inside its functions).
"""
