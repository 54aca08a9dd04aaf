"""The agent's nodes, one module each: perceive → recall → compose → respond → gate_and_store."""
