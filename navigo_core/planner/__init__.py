"""The trip planner package (requirement parsing, form completion, agents)."""
