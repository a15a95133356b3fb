"""The pages, one module per subject; every view needs a signed-in user."""
