"""Django project configuration for tvcs-assign (settings come from the environment)."""
