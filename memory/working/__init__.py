"""Working and sensory memory: context strategies, summary, task state, scratchpad, brakes."""
