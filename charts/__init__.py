"""Server-side SVG charts: geometry in :mod:`charts.geometry`, markup in ``templates/charts/``."""
