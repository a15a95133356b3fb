#!/usr/bin/env python
"""Django's command-line utility for tvcs-assign."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:  # a setting from the environment: one line, no trace
        sys.exit(f"Error: {exc}")


if __name__ == "__main__":
    main()
