"""The memory agent: graphs, nodes, CLI and server glue; composes memory/ and prompts/."""
