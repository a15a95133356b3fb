"""The pages project managers use: server-rendered views over the assignment app's services."""
