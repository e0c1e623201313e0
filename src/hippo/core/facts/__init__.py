"""Facts: extraction from what the user says, recognition against what is known, supersession."""
